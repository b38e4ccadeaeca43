"""Share groups (KIP-932) in ``__consumer_offsets``, as Kafka's coordinator records them.

Keys and values are laid out as the KIP-848 records (``group_record_fields``): a key is
``type i16`` then the group (and member) id, not flexible; a value ``version=0 i16`` then
flexible fields. A null value deletes the key.

- 10 ShareGroupMemberMetadata, key group and member: rack, client id and host, subscribed
  topic names.
- 11 ShareGroupMetadata, key group: the group epoch and the metadata hash.
- 12 ShareGroupTargetAssignmentMetadata, key group: the assignment epoch.
- 13 ShareGroupTargetAssignmentMember, key group and member: target partitions by topic id.
- 14 ShareGroupCurrentMemberAssignment, key group and member: member epoch, previous
  epoch, state (always 0, stable), assigned partitions.
- 15 ShareGroupStatePartitionMetadata, key group: the initialized topics (id, name,
  partitions); the initializing and deleting topics are always empty here (a share-partition's
  state is created by its leader when first fetched, and deleted at once by an admin).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import IntEnum

from odradek.broker.group.group_record_fields import (
    VALUE_VERSION,
    array_length,
    encode_modern_key,
    read_modern_key,
    read_topic_partitions,
    write_topic_partitions,
)
from odradek.broker.group.group_writes import KeyValue
from odradek.broker.group.share_group import (
    InitializedTopics,
    ShareGroup,
    ShareMember,
    TopicPartitions,
)
from odradek.broker.protocol.record_fields import FieldReader, FieldWriter

STABLE_MEMBER_STATE = 0  # Kafka's MemberState.STABLE: a share member is never in another


class ShareRecordType(IntEnum):
    MEMBER_METADATA = 10
    GROUP_METADATA = 11
    TARGET_ASSIGNMENT_METADATA = 12
    TARGET_ASSIGNMENT_MEMBER = 13
    CURRENT_MEMBER_ASSIGNMENT = 14
    STATE_PARTITION_METADATA = 15


_PER_MEMBER = {
    ShareRecordType.MEMBER_METADATA,
    ShareRecordType.TARGET_ASSIGNMENT_MEMBER,
    ShareRecordType.CURRENT_MEMBER_ASSIGNMENT,
}


@dataclass(frozen=True)
class ShareGroupKey:
    kind: ShareRecordType
    group_id: str
    member_id: str = ""


def encode_share_key(key: ShareGroupKey) -> bytes:
    return encode_modern_key(key.kind, key.group_id, key.member_id, _PER_MEMBER)


def read_share_key(kind: int, reader: FieldReader) -> ShareGroupKey:
    record_type = ShareRecordType(kind)
    return ShareGroupKey(record_type, *read_modern_key(record_type, reader, _PER_MEMBER))


def is_share_record_type(kind: int) -> bool:
    return kind in ShareRecordType._value2member_map_


# --- what a change of the group writes ---------------------------------------------------------


def group_metadata(group_id: str, group: ShareGroup) -> KeyValue:
    value = FieldWriter().i16(VALUE_VERSION).i32(group.group_epoch).i64(group.metadata_hash)
    return _key(ShareRecordType.GROUP_METADATA, group_id), value.tagged({}).done()


def member_metadata(group_id: str, member: ShareMember) -> KeyValue:
    out = FieldWriter().i16(VALUE_VERSION).compact_nullable_string(member.rack_id)
    out.compact_string(member.client_id).compact_string(member.client_host)
    out.compact_count(len(member.subscribed_topic_names))
    for name in member.subscribed_topic_names:
        out.compact_string(name)
    key = _key(ShareRecordType.MEMBER_METADATA, group_id, member.member_id)
    return key, out.tagged({}).done()


def target_metadata(group_id: str, group: ShareGroup) -> KeyValue:
    value = FieldWriter().i16(VALUE_VERSION).i32(group.assignment_epoch).tagged({}).done()
    return _key(ShareRecordType.TARGET_ASSIGNMENT_METADATA, group_id), value


def target_member(group_id: str, member_id: str, partitions: TopicPartitions) -> KeyValue:
    value = write_topic_partitions(FieldWriter().i16(VALUE_VERSION), partitions).tagged({})
    return _key(ShareRecordType.TARGET_ASSIGNMENT_MEMBER, group_id, member_id), value.done()


def current_assignment(group_id: str, member: ShareMember) -> KeyValue:
    out = FieldWriter().i16(VALUE_VERSION)
    out.i32(member.member_epoch).i32(member.previous_member_epoch).i8(STABLE_MEMBER_STATE)
    value = write_topic_partitions(out, member.assigned).tagged({})
    key = _key(ShareRecordType.CURRENT_MEMBER_ASSIGNMENT, group_id, member.member_id)
    return key, value.done()


def state_partition_metadata(group_id: str, group: ShareGroup) -> KeyValue:
    out = FieldWriter().i16(VALUE_VERSION).compact_count(0)  # no initializing topics
    out.compact_count(len(group.initialized))
    for topic_id, (name, partitions) in sorted(group.initialized.items(), key=lambda i: i[1][0]):
        out.uuid(topic_id).compact_string(name).compact_count(len(partitions))
        for index in sorted(partitions):
            out.i32(index)
        out.tagged({})
    value = out.compact_count(0).tagged({}).done()  # no deleting topics
    return _key(ShareRecordType.STATE_PARTITION_METADATA, group_id), value


def member_tombstones(group_id: str, member_id: str) -> list[KeyValue]:
    """Kafka's order: current assignment, target, then metadata."""
    kinds = (
        ShareRecordType.CURRENT_MEMBER_ASSIGNMENT,
        ShareRecordType.TARGET_ASSIGNMENT_MEMBER,
        ShareRecordType.MEMBER_METADATA,
    )
    return [(_key(kind, group_id, member_id), None) for kind in kinds]


def group_tombstones(group_id: str, group: ShareGroup) -> list[KeyValue]:
    records = [r for member_id in group.members for r in member_tombstones(group_id, member_id)]
    records.append((_key(ShareRecordType.TARGET_ASSIGNMENT_METADATA, group_id), None))
    records.append((_key(ShareRecordType.STATE_PARTITION_METADATA, group_id), None))
    records.append((_key(ShareRecordType.GROUP_METADATA, group_id), None))
    return records


def snapshot(group_id: str, group: ShareGroup) -> list[KeyValue]:
    """Every record of the group as it is now (after a write that may not have landed)."""
    records = [group_metadata(group_id, group)]
    for member in group.members.values():
        records.append(member_metadata(group_id, member))
        records.append(
            target_member(group_id, member.member_id, group.target.get(member.member_id, {}))
        )
        records.append(current_assignment(group_id, member))
    records.append(target_metadata(group_id, group))
    records.append(state_partition_metadata(group_id, group))
    return records


def _key(kind: ShareRecordType, group_id: str, member_id: str = "") -> bytes:
    return encode_share_key(ShareGroupKey(kind, group_id, member_id))


# --- reading them back -------------------------------------------------------------------------


@dataclass
class LoadedShareGroup:
    """A share group's records as replay finds them, key by key."""

    group_epoch: int = 0
    metadata_hash: int = 0
    assignment_epoch: int = 0
    members: dict[str, ShareMember] = field(default_factory=dict)
    current: dict[str, tuple[int, int, TopicPartitions]] = field(default_factory=dict)
    target: dict[str, TopicPartitions] = field(default_factory=dict)
    initialized: InitializedTopics = field(default_factory=dict)
    exists: bool = False

    def apply(self, key: ShareGroupKey, value: bytes | None) -> None:
        kind, member_id = key.kind, key.member_id
        if kind is ShareRecordType.GROUP_METADATA:
            self.exists = value is not None
            if value is not None:
                self.group_epoch, self.metadata_hash = _read_group_metadata(value)
        elif kind is ShareRecordType.TARGET_ASSIGNMENT_METADATA:
            self.assignment_epoch = _read_target_metadata(value) if value is not None else 0
        elif kind is ShareRecordType.STATE_PARTITION_METADATA:
            self.initialized = _read_state_partitions(value) if value is not None else {}
        elif value is None:
            {
                ShareRecordType.MEMBER_METADATA: self.members,
                ShareRecordType.CURRENT_MEMBER_ASSIGNMENT: self.current,
                ShareRecordType.TARGET_ASSIGNMENT_MEMBER: self.target,
            }[kind].pop(member_id, None)  # type: ignore[attr-defined]
        elif kind is ShareRecordType.MEMBER_METADATA:
            self.members[member_id] = _read_member_metadata(member_id, value)
        elif kind is ShareRecordType.TARGET_ASSIGNMENT_MEMBER:
            self.target[member_id] = _read_partitions_value(value)
        else:
            self.current[member_id] = _read_current_assignment(value)

    def build(self) -> ShareGroup | None:
        if not self.exists:
            return None
        group = ShareGroup(self.group_epoch, self.metadata_hash, self.assignment_epoch)
        group.initialized = self.initialized
        for member_id, member in self.members.items():
            if member_id in self.current:
                epoch, previous, assigned = self.current[member_id]
                member.member_epoch, member.previous_member_epoch = epoch, previous
                member.assigned = assigned
            group.members[member_id] = member
            group.target[member_id] = self.target.get(member_id, {})
        return group


def _value(data: bytes) -> FieldReader:
    reader = FieldReader(data)
    reader.version(VALUE_VERSION)
    return reader


def _read_group_metadata(data: bytes) -> tuple[int, int]:
    reader = _value(data)
    epoch, metadata_hash = reader.i32(), reader.i64()
    reader.tagged()
    reader.end()
    return epoch, metadata_hash


def _read_target_metadata(data: bytes) -> int:
    reader = _value(data)
    epoch = reader.i32()
    reader.tagged()  # Kafka 4.3's tag 0: when the assignment was computed
    reader.end()
    return epoch


def _read_state_partitions(data: bytes) -> InitializedTopics:
    """The initialized topics (initializing ones count as initialized: their leader
    creates the state; deleting ones as gone)."""
    reader = _value(data)
    topics: InitializedTopics = {}
    for _ in range(2):  # initializing, then initialized topics
        for _ in range(array_length(reader)):
            topic_id, name = reader.uuid(), reader.compact_text()
            partitions = frozenset(reader.i32() for _ in range(array_length(reader)))
            reader.tagged()
            known = topics.get(topic_id, (name, frozenset()))[1]
            topics[topic_id] = (name, known | partitions)
    for _ in range(array_length(reader)):
        topics.pop(reader.uuid(), None)
        reader.compact_text()
        reader.tagged()
    reader.tagged()
    reader.end()
    return topics


def _read_member_metadata(member_id: str, data: bytes) -> ShareMember:
    reader = _value(data)
    rack_id, client_id, client_host = (
        reader.compact_string(),
        reader.compact_text(),
        reader.compact_text(),
    )
    names = tuple(sorted({reader.compact_text() for _ in range(array_length(reader))}))
    reader.tagged()
    reader.end()
    return ShareMember(member_id, rack_id, client_id, client_host, names)


def _read_partitions_value(data: bytes) -> TopicPartitions:
    reader = _value(data)
    partitions = read_topic_partitions(reader)
    reader.tagged()
    reader.end()
    return partitions


def _read_current_assignment(data: bytes) -> tuple[int, int, TopicPartitions]:
    reader = _value(data)
    epoch, previous = reader.i32(), reader.i32()
    reader.i8()  # the member state: always stable
    assigned = read_topic_partitions(reader)
    reader.tagged()
    reader.end()
    return epoch, previous, assigned


def replayed_share_groups(
    records: Iterable[tuple[ShareGroupKey, bytes | None]],
) -> dict[str, ShareGroup | None]:
    """Apply share-group records in log order: group id -> group (None: deleted)."""
    loaded: dict[str, LoadedShareGroup] = {}
    for key, value in records:
        loaded.setdefault(key.group_id, LoadedShareGroup()).apply(key, value)
    return {group_id: state.build() for group_id, state in loaded.items()}
