"""The records the coordinator writes to ``__consumer_offsets``: our own versioned format.

Every record's key starts with its type, every value with its version, so a
reader can skip or refuse what it does not know and later versions can add
fields. A null value is a tombstone (compaction drops the key). Big-endian;
``string`` is i16 length + UTF-8 (-1 = null), ``bytes`` i32 length + data.

- offset commit: key ``type=0 i16, group string, topic string, partition i32``;
  value v0 ``version=0 i16, offset i64, leader_epoch i32, metadata string,
  commit_timestamp i64, expire_timestamp i64`` (-1: none).
- group metadata: key ``type=1 i16, group string``; value v0 ``version=0 i16,
  protocol_type string, generation i32, protocol string, leader string,
  state_timestamp i64, members i32 count`` then per member ``member_id string,
  group_instance_id string, client_id string, client_host string,
  rebalance_timeout_ms i32, session_timeout_ms i32, subscription bytes,
  assignment bytes``.
- KIP-848 consumer groups: Kafka's own record types 3, 5, 6, 7 and 8
  (``consumer_group_records``).
- KIP-932 share groups: Kafka's own record types 10 to 14 (``share_group_records``).
"""

from __future__ import annotations

from dataclasses import dataclass

from odradek.broker.group.consumer_group_records import (
    ConsumerGroupKey,
    encode_consumer_key,
    is_consumer_record_type,
    read_consumer_key,
)
from odradek.broker.group.share_group_records import (
    ShareGroupKey,
    encode_share_key,
    is_share_record_type,
    read_share_key,
)
from odradek.broker.protocol.record_fields import FieldReader, FieldWriter, RecordFormatError

OFFSET_KEY_TYPE = 0
GROUP_KEY_TYPE = 1
OFFSET_VALUE_VERSION = 0
GROUP_VALUE_VERSION = 0


@dataclass(frozen=True)
class OffsetKey:
    group_id: str
    topic: str
    partition: int


@dataclass(frozen=True)
class GroupKey:
    group_id: str


@dataclass(frozen=True)
class CommittedOffset:
    offset: int
    leader_epoch: int
    metadata: str | None
    commit_timestamp: int
    expire_timestamp: int = -1  # set by OffsetCommit v2-v4's retention_time


@dataclass(frozen=True)
class StoredMember:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    subscription: bytes
    assignment: bytes


@dataclass(frozen=True)
class StoredGroup:
    protocol_type: str | None
    generation: int
    protocol_name: str | None
    leader_id: str | None
    state_timestamp: int
    members: tuple[StoredMember, ...]


RecordKey = OffsetKey | GroupKey | ConsumerGroupKey | ShareGroupKey


def encode_key(key: RecordKey) -> bytes:
    if isinstance(key, ConsumerGroupKey):
        return encode_consumer_key(key)
    if isinstance(key, ShareGroupKey):
        return encode_share_key(key)
    out = FieldWriter()
    if isinstance(key, OffsetKey):
        out.i16(OFFSET_KEY_TYPE).string(key.group_id).string(key.topic).i32(key.partition)
    else:
        out.i16(GROUP_KEY_TYPE).string(key.group_id)
    return out.done()


def decode_key(data: bytes) -> RecordKey:
    reader = FieldReader(data)
    kind = reader.i16()
    if kind == OFFSET_KEY_TYPE:
        key: RecordKey = OffsetKey(reader.text(), reader.text(), reader.i32())
    elif kind == GROUP_KEY_TYPE:
        key = GroupKey(reader.text())
    elif is_consumer_record_type(kind):
        key = read_consumer_key(kind, reader)
    elif is_share_record_type(kind):
        key = read_share_key(kind, reader)
    else:
        raise RecordFormatError(f"unknown coordinator record key type {kind}")
    reader.end()
    return key


def encode_offset(value: CommittedOffset) -> bytes:
    out = FieldWriter().i16(OFFSET_VALUE_VERSION).i64(value.offset).i32(value.leader_epoch)
    out.string(value.metadata).i64(value.commit_timestamp).i64(value.expire_timestamp)
    return out.done()


def decode_offset(data: bytes) -> CommittedOffset:
    reader = FieldReader(data)
    reader.version(OFFSET_VALUE_VERSION)
    value = CommittedOffset(reader.i64(), reader.i32(), reader.string(), reader.i64(), reader.i64())
    reader.end()
    return value


def encode_group(value: StoredGroup) -> bytes:
    out = FieldWriter().i16(GROUP_VALUE_VERSION).string(value.protocol_type).i32(value.generation)
    out.string(value.protocol_name).string(value.leader_id).i64(value.state_timestamp)
    out.i32(len(value.members))
    for member in value.members:
        out.string(member.member_id).string(member.group_instance_id)
        out.string(member.client_id).string(member.client_host)
        out.i32(member.rebalance_timeout_ms).i32(member.session_timeout_ms)
        out.blob(member.subscription).blob(member.assignment)
    return out.done()


def decode_group(data: bytes) -> StoredGroup:
    reader = FieldReader(data)
    reader.version(GROUP_VALUE_VERSION)
    protocol_type, generation = reader.string(), reader.i32()
    protocol_name, leader_id, state_timestamp = reader.string(), reader.string(), reader.i64()
    members = tuple(
        StoredMember(
            reader.text(),
            reader.string(),
            reader.text(),
            reader.text(),
            reader.i32(),
            reader.i32(),
            reader.blob(),
            reader.blob(),
        )
        for _ in range(reader.count())
    )
    reader.end()
    return StoredGroup(
        protocol_type, generation, protocol_name, leader_id, state_timestamp, members
    )
