"""Transaction markers: the control batches that commit or abort a producer's transaction
in one partition, in Kafka's format.

A marker batch is transactional and control (attributes 0x30), uncompressed, CreateTime,
base sequence -1, with the transaction's producer id and epoch; its one record has the key
``version int16 = 0, type int16`` (ABORT 0, COMMIT 1) and the value ``version int16 = 0,
coordinator_epoch int32``. Readers take any key or value version as version 0, as Kafka's
``ControlRecordType`` and ``EndTransactionMarker`` do.
"""

from __future__ import annotations

import enum
import struct
from dataclasses import dataclass

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.record_codec import BatchSpec, Record, decode_batch, encode_batch
from odradek.broker.protocol.records import CONTROL_MASK, TRANSACTIONAL_MASK

_KEY = struct.Struct(">hh")
_VALUE = struct.Struct(">hi")
MARKER_ATTRIBUTES = TRANSACTIONAL_MASK | CONTROL_MASK


class MarkerType(enum.IntEnum):
    ABORT = 0
    COMMIT = 1


@dataclass(frozen=True, slots=True)
class TransactionMarker:
    producer_id: int
    producer_epoch: int
    type: MarkerType
    coordinator_epoch: int

    @property
    def commits(self) -> bool:
        return self.type is MarkerType.COMMIT


def encode_marker(marker: TransactionMarker, timestamp_ms: int) -> bytes:
    """A marker batch at offset 0 (the leader assigns its offset when it appends it)."""
    record = Record(
        offset=0,
        timestamp=timestamp_ms,
        key=_KEY.pack(0, marker.type),
        value=_VALUE.pack(0, marker.coordinator_epoch),
    )
    spec = BatchSpec(
        attributes=MARKER_ATTRIBUTES,
        producer_id=marker.producer_id,
        producer_epoch=marker.producer_epoch,
        records=(record,),
    )
    return encode_batch(spec)


def decode_marker(batch: bytes | bytearray | memoryview) -> TransactionMarker | None:
    """The marker a control batch holds; None for another kind of control record (or an
    empty control batch the cleaner left). Raises CORRUPT_MESSAGE for a malformed one."""
    header, records = decode_batch(batch)
    if not header.is_control or not records:
        return None
    key, value = records[0].key, records[0].value
    if key is None or len(key) < _KEY.size:
        raise KafkaError(ErrorCode.corrupt_message, "a control record without its type")
    version, kind = _KEY.unpack_from(key)
    if version < 0:
        raise KafkaError(ErrorCode.corrupt_message, f"control record key version {version}")
    if kind not in (MarkerType.ABORT, MarkerType.COMMIT):
        return None
    if value is None or len(value) < _VALUE.size:
        raise KafkaError(ErrorCode.corrupt_message, "a transaction marker without its value")
    _, coordinator_epoch = _VALUE.unpack_from(value)
    return TransactionMarker(
        header.producer_id, header.producer_epoch, MarkerType(kind), coordinator_epoch
    )
