"""Record batch v2 framing: header fields, validation and in-place patching.

Batches are stored exactly as producers send them, so the broker only reads
their 61-byte headers. Layout (big-endian): baseOffset i64 @0, batchLength i32
@8, partitionLeaderEpoch i32 @12, magic i8 @16, crc u32 @17, attributes i16
@21, lastOffsetDelta i32 @23, baseTimestamp i64 @27, maxTimestamp i64 @35,
producerId i64 @43, producerEpoch i16 @51, baseSequence i32 @53, recordsCount
i32 @57. The CRC-32C covers bytes 21..end, so baseOffset and
partitionLeaderEpoch can be patched without recomputing it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import NamedTuple

from crc32c import crc32c

from odradek.broker.protocol.errors import ErrorCode, KafkaError

HEADER_SIZE = 61
LOG_OVERHEAD = 12  # baseOffset + batchLength: the bytes not counted in batchLength
MAGIC = 2
NO_PRODUCER_ID = -1
NO_SEQUENCE = -1

COMPRESSION_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40  # KIP-534: the base timestamp is when the cleaner may drop it

_HEADER = struct.Struct(">qiibIhiqqqhii")
_OFFSET_AND_LENGTH = struct.Struct(">qi")
_BASE_OFFSET = struct.Struct(">q")
_LEADER_EPOCH = struct.Struct(">i")


class BatchHeader(NamedTuple):
    """The fixed fields of one v2 record batch, plus where it sits in a buffer (a tuple: one
    is made for every batch a request carries or a log scan passes)."""

    position: int
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def size(self) -> int:
        """Bytes the whole batch takes on the wire and on disk."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def last_sequence(self) -> int:
        if self.base_sequence == NO_SEQUENCE:
            return NO_SEQUENCE
        return (self.base_sequence + self.last_offset_delta) % (1 << 31)

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_MASK

    @property
    def is_log_append_time(self) -> bool:
        return bool(self.attributes & TIMESTAMP_TYPE_MASK)

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id != NO_PRODUCER_ID

    @property
    def delete_horizon_ms(self) -> int | None:
        """When the cleaner may remove the batch (set on a marker it found guarding no
        data), None if not set."""
        return self.base_timestamp if self.attributes & DELETE_HORIZON_MASK else None


def read_header(buffer: bytes | bytearray | memoryview, position: int = 0) -> BatchHeader:
    """Parse the header of the batch starting at ``position``; the caller checks bounds."""
    return header_at(buffer, position, position)


def header_at(buffer: bytes | bytearray | memoryview, offset: int, position: int) -> BatchHeader:
    """Parse the header at ``offset`` of ``buffer``, a block read from ``position`` of a
    file, as the header of the batch at ``position``; the caller checks bounds."""
    return BatchHeader(position, *_HEADER.unpack_from(buffer, offset))


def peek_offset_and_length(
    buffer: bytes | bytearray | memoryview, position: int = 0
) -> tuple[int, int]:
    """Return (baseOffset, batchLength) of the batch at ``position``."""
    base_offset, batch_length = _OFFSET_AND_LENGTH.unpack_from(buffer, position)
    return base_offset, batch_length


def iter_batches(buffer: bytes | bytearray | memoryview) -> Iterator[BatchHeader]:
    """Yield the header of every batch in ``buffer``, validating framing and CRC.

    Raises ``KafkaError(CORRUPT_MESSAGE)`` for a truncated or oversized batch,
    a wrong magic byte or a CRC mismatch; the buffer must hold whole batches.
    """
    view = memoryview(buffer)
    end = len(view)
    position = 0
    while position < end:
        if end - position < HEADER_SIZE:
            raise KafkaError(ErrorCode.corrupt_message, "truncated record batch header")
        header = read_header(view, position)
        if header.magic != MAGIC:
            raise KafkaError(
                ErrorCode.corrupt_message, f"record batch magic {header.magic}, expected 2"
            )
        if header.batch_length < HEADER_SIZE - LOG_OVERHEAD or position + header.size > end:
            raise KafkaError(ErrorCode.corrupt_message, "record batch length out of bounds")
        if header.records_count < 0 or header.last_offset_delta < 0:
            raise KafkaError(ErrorCode.corrupt_message, "negative record count or offset delta")
        if crc32c(view[position + 21 : position + header.size]) != header.crc:
            raise KafkaError(ErrorCode.corrupt_message, "record batch CRC-32C mismatch")
        yield header
        position += header.size


def patch_batch(
    buffer: bytearray | memoryview, position: int, base_offset: int, leader_epoch: int
) -> None:
    """Overwrite baseOffset and partitionLeaderEpoch (both outside the CRC) in place."""
    _BASE_OFFSET.pack_into(buffer, position, base_offset)
    _LEADER_EPOCH.pack_into(buffer, position + 12, leader_epoch)
