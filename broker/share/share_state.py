"""A share-partition's durable state and its records in ``__share_group_state``.

The state is the share-partition start offset (every record below it is done with) and
the state batches above it: ranges of offsets that are available again, acknowledged or
archived, with their delivery counts. Records past the last batch were never delivered.

The coordinator writes Kafka's ShareSnapshot records (type 0): the key (not flexible) is
``type i16 = 0``, group id, topic id, partition; the value ``version i16 = 0`` then the
flexible fields snapshot epoch, state epoch, leader epoch, start offset, create and write
timestamps, the state batches (first and last offset, delivery state, delivery count)
and tag 0 the delivery complete count (KIP-1226). Every write is a whole snapshot, so
compaction keeps exactly the latest state of each share-partition.
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass
from enum import IntEnum

from odradek.broker.protocol.record_fields import FieldReader, FieldWriter, RecordFormatError

SHARE_STATE_TOPIC = "__share_group_state"
SNAPSHOT_TYPE = 0  # Kafka's ShareUpdate deltas (type 1) are never written
_DELIVERY_COMPLETE_TAG = 0
UNINITIALIZED = -1
"""The start offset of a share-partition whose start is still to be chosen (by the
group's ``share.auto.offset.reset`` when its leader first serves it)."""


class DeliveryState(IntEnum):
    AVAILABLE = 0
    ACQUIRED = 1  # in memory only: persisted as AVAILABLE
    ACKNOWLEDGED = 2
    ARCHIVED = 4


@dataclass(frozen=True)
class StateBatch:
    first_offset: int
    last_offset: int
    delivery_state: DeliveryState
    delivery_count: int


@dataclass(frozen=True)
class SharePartitionKey:
    group_id: str
    topic_id: uuid.UUID
    partition: int

    def coordinator_key(self) -> str:
        """Kafka's key for placing the state: ``group:topicId:partition``."""
        return f"{self.group_id}:{kafka_uuid(self.topic_id)}:{self.partition}"


@dataclass(frozen=True)
class ShareState:
    start_offset: int = UNINITIALIZED
    state_epoch: int = 0
    leader_epoch: int = -1
    batches: tuple[StateBatch, ...] = ()
    create_timestamp: int = -1
    snapshot_epoch: int = 0

    @property
    def delivery_complete_count(self) -> int:
        """Records at or above the start offset that are done with (KIP-1226)."""
        return sum(
            batch.last_offset - batch.first_offset + 1
            for batch in self.batches
            if batch.delivery_state in (DeliveryState.ACKNOWLEDGED, DeliveryState.ARCHIVED)
        )

    def lag(self, high_watermark: int) -> int:
        """Records below ``high_watermark`` still to be delivered or acknowledged."""
        return max(high_watermark - self.start_offset - self.delivery_complete_count, 0)


def kafka_uuid(value: uuid.UUID) -> str:
    """Kafka's ``Uuid.toString``: URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(value.bytes).decode().rstrip("=")


def encode_key(key: SharePartitionKey) -> bytes:
    writer = FieldWriter().i16(SNAPSHOT_TYPE).string(key.group_id).uuid(key.topic_id)
    return writer.i32(key.partition).done()


def decode_key(data: bytes) -> SharePartitionKey:
    reader = FieldReader(data)
    kind = reader.i16()
    if kind != SNAPSHOT_TYPE:
        raise RecordFormatError(f"share-state record type {kind} is not a snapshot")
    key = SharePartitionKey(reader.text(), reader.uuid(), reader.i32())
    reader.end()
    return key


def encode_snapshot(state: ShareState, write_timestamp: int) -> bytes:
    writer = FieldWriter().i16(0)
    writer.i32(state.snapshot_epoch).i32(state.state_epoch).i32(state.leader_epoch)
    writer.i64(state.start_offset).i64(state.create_timestamp).i64(write_timestamp)
    writer.compact_count(len(state.batches))
    for batch in state.batches:
        writer.i64(batch.first_offset).i64(batch.last_offset)
        writer.i8(batch.delivery_state).i16(batch.delivery_count).tagged({})
    complete = FieldWriter().i32(state.delivery_complete_count).done()
    return writer.tagged({_DELIVERY_COMPLETE_TAG: complete}).done()


def decode_snapshot(data: bytes) -> ShareState:
    reader = FieldReader(data)
    reader.version(0)
    snapshot_epoch, state_epoch, leader_epoch = reader.i32(), reader.i32(), reader.i32()
    start_offset, create_timestamp, _written = reader.i64(), reader.i64(), reader.i64()
    batches = []
    for _ in range(reader.compact_nullable_count() or 0):
        first, last = reader.i64(), reader.i64()
        batches.append(StateBatch(first, last, DeliveryState(reader.i8()), reader.i16()))
        reader.tagged()
    reader.tagged()
    reader.end()
    return ShareState(
        start_offset, state_epoch, leader_epoch, tuple(batches), create_timestamp, snapshot_epoch
    )
