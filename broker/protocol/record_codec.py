"""Records inside v2 batches: decoding and encoding, for the few places that must.

The broker stores and serves batches opaquely; only the group coordinator (its
own records), compaction, recompression, LogAppendTime and exact timestamp
lookups look inside. Layout of a record: length varint, attributes i8,
timestampDelta varlong, offsetDelta varint, key (varint length, -1 = null),
value (likewise), header count varint, then per header a key string and a
nullable value, all lengths zigzag varints.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from crc32c import crc32c

from odradek.broker.protocol.compression import compress, decompress
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.records import (
    COMPRESSION_MASK,
    DELETE_HORIZON_MASK,
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    BatchHeader,
    read_header,
)
from odradek.broker.protocol.varint import read_varint, write_varint

_HEADER = struct.Struct(">qiibIhiqqqhii")
_CRC = struct.Struct(">I")


class Record(NamedTuple):
    """One record of a batch, its offset and timestamp made absolute (a tuple: a batch's
    records are built by the thousand when a coordinator loads its log)."""

    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()


@dataclass(frozen=True)
class BatchSpec:
    """The batch-level fields of a batch to encode."""

    base_offset: int = 0
    codec: int = 0
    attributes: int = 0  # bits other than the codec: timestamp type, transactional, control
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = -1
    base_sequence: int = NO_SEQUENCE
    partition_leader_epoch: int = -1
    max_timestamp: int | None = None  # LogAppendTime batches carry the append time here
    records: Sequence[Record] = field(default_factory=tuple)
    compression_level: int | None = None  # None: the codec's default
    delete_horizon_ms: int | None = None  # KIP-534: the base timestamp, flagged as such

    @classmethod
    def like(cls, header: BatchHeader, records: Sequence[Record], **changes: Any) -> BatchSpec:
        """A batch with the batch-level fields of ``header`` (but ``changes``) and
        ``records``: a rewrite keeps its offsets, producer fields and codec."""
        fields: dict[str, Any] = {
            "base_offset": header.base_offset,
            "codec": header.compression,
            "attributes": header.attributes,
            "producer_id": header.producer_id,
            "producer_epoch": header.producer_epoch,
            "base_sequence": header.base_sequence,
            "partition_leader_epoch": header.partition_leader_epoch,
        }
        return cls(**{**fields, **changes}, records=records)


def decode_batch(
    batch: bytes | bytearray | memoryview, header: BatchHeader | None = None
) -> tuple[BatchHeader, list[Record]]:
    """The header and records of one whole batch (decompressed as needed); ``header`` is
    its header where the caller has read it already."""
    if header is None:
        header = read_header(batch)
    payload = bytes(batch[HEADER_SIZE : header.size])
    if header.compression:
        payload = decompress(header.compression, payload)
    try:
        return header, _decode_records(header, payload)
    except (IndexError, UnicodeDecodeError, ValueError) as error:
        raise KafkaError(ErrorCode.corrupt_message, f"malformed record: {error}") from None


def encode_batch(spec: BatchSpec) -> bytes:
    """A complete v2 batch with correct length and CRC-32C."""
    records = spec.records
    if not records:
        raise ValueError("a batch needs at least one record")
    base_timestamp = records[0].timestamp
    attributes = (spec.attributes & ~COMPRESSION_MASK) | spec.codec
    if spec.delete_horizon_ms is not None:
        base_timestamp = spec.delete_horizon_ms
        attributes |= DELETE_HORIZON_MASK
    payload = bytearray()
    for record in records:
        payload += _encode_record(record, spec.base_offset, base_timestamp)
    body = (
        compress(spec.codec, bytes(payload), spec.compression_level)
        if spec.codec
        else bytes(payload)
    )
    max_timestamp = spec.max_timestamp
    if max_timestamp is None:
        max_timestamp = max(record.timestamp for record in records)
    batch = bytearray(
        _HEADER.pack(
            spec.base_offset,
            HEADER_SIZE - LOG_OVERHEAD + len(body),
            spec.partition_leader_epoch,
            MAGIC,
            0,
            attributes,
            records[-1].offset - spec.base_offset,
            base_timestamp,
            max_timestamp,
            spec.producer_id,
            spec.producer_epoch,
            spec.base_sequence,
            len(records),
        )
    )
    batch += body
    _CRC.pack_into(batch, 17, crc32c(memoryview(batch)[21:]))
    return bytes(batch)


def _decode_records(header: BatchHeader, payload: bytes) -> list[Record]:
    records = []
    position = 0
    base_offset = header.base_offset
    base_timestamp = header.base_timestamp
    append_time = header.max_timestamp if header.is_log_append_time else None
    for _ in range(header.records_count):
        length, position = read_varint(payload, position)
        end = position + length
        position += 1  # record attributes: unused
        timestamp_delta, position = read_varint(payload, position)
        offset_delta, position = read_varint(payload, position)
        key, position = _read_bytes(payload, position)
        value, position = _read_bytes(payload, position)
        count, position = read_varint(payload, position)
        headers: tuple[tuple[str, bytes | None], ...] = ()
        if count:
            fields = []
            for _ in range(count):
                name, position = _read_bytes(payload, position)
                header_value, position = _read_bytes(payload, position)
                fields.append(((name or b"").decode(), header_value))
            headers = tuple(fields)
        if position != end:
            raise ValueError("record length does not match its fields")
        timestamp = base_timestamp + timestamp_delta if append_time is None else append_time
        records.append(Record(base_offset + offset_delta, timestamp, key, value, headers))
    return records


def _encode_record(record: Record, base_offset: int, base_timestamp: int) -> bytes:
    body = bytearray(b"\0")
    body += write_varint(record.timestamp - base_timestamp)
    body += write_varint(record.offset - base_offset)
    body += _bytes_field(record.key)
    body += _bytes_field(record.value)
    body += write_varint(len(record.headers))
    for name, value in record.headers:
        body += _bytes_field(name.encode())
        body += _bytes_field(value)
    return write_varint(len(body)) + bytes(body)


def _bytes_field(value: bytes | None) -> bytes:
    if value is None:
        return write_varint(-1)
    return write_varint(len(value)) + value


def _read_bytes(buffer: bytes, position: int) -> tuple[bytes | None, int]:
    length, position = read_varint(buffer, position)
    if length < 0:
        return None, position
    end = position + length
    if end > len(buffer):
        raise ValueError("field runs past the record")
    return buffer[position:end], end
