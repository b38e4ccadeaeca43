"""KIP-848 consumer groups in ``__consumer_offsets``, as Kafka's coordinator records.

Each key is ``type i16`` then its fields (not flexible); each value ``version=0 i16`` then
flexible fields (compact strings and arrays, tagged fields). A null value deletes the key.

- 3 ConsumerGroupMetadata, key group: the group epoch; tag 0 the metadata hash.
- 5 ConsumerGroupMemberMetadata, key group and member: instance id, rack, client id and
  host, subscribed topic names and regex, rebalance timeout, server assignor; tag 0 a
  classic member's session timeout and protocols.
- 6 ConsumerGroupTargetAssignmentMetadata, key group: the assignment epoch.
- 7 ConsumerGroupTargetAssignmentMember, key group and member: target partitions by
  topic id.
- 8 ConsumerGroupCurrentMemberAssignment, key group and member: member epoch, previous
  epoch, state, assigned partitions (tag 0: the epoch each was assigned at), partitions
  pending revocation.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum

from odradek.broker.group.consumer_group import ConsumerGroup
from odradek.broker.group.consumer_member import (
    Assignment,
    ClassicMembership,
    ConsumerMember,
    MemberState,
)
from odradek.broker.group.group_record_fields import (
    VALUE_VERSION,
    array_length,
    encode_modern_key,
    read_modern_key,
    read_topic_partitions,
    write_topic_partitions,
)
from odradek.broker.protocol.record_fields import FieldReader, FieldWriter, RecordFormatError

KeyValue = tuple[bytes, bytes | None]
_METADATA_HASH_TAG = 0
_ASSIGNMENT_EPOCHS_TAG = 0
_CLASSIC_MEMBER_TAG = 0


class ConsumerRecordType(IntEnum):
    GROUP_METADATA = 3
    MEMBER_METADATA = 5
    TARGET_ASSIGNMENT_METADATA = 6
    TARGET_ASSIGNMENT_MEMBER = 7
    CURRENT_MEMBER_ASSIGNMENT = 8


_PER_MEMBER = {
    ConsumerRecordType.MEMBER_METADATA,
    ConsumerRecordType.TARGET_ASSIGNMENT_MEMBER,
    ConsumerRecordType.CURRENT_MEMBER_ASSIGNMENT,
}


@dataclass(frozen=True)
class ConsumerGroupKey:
    kind: ConsumerRecordType
    group_id: str
    member_id: str = ""


def encode_consumer_key(key: ConsumerGroupKey) -> bytes:
    return encode_modern_key(key.kind, key.group_id, key.member_id, _PER_MEMBER)


def read_consumer_key(kind: int, reader: FieldReader) -> ConsumerGroupKey:
    record_type = ConsumerRecordType(kind)
    return ConsumerGroupKey(record_type, *read_modern_key(record_type, reader, _PER_MEMBER))


def is_consumer_record_type(kind: int) -> bool:
    return kind in ConsumerRecordType._value2member_map_


# --- what a change of the group writes ---------------------------------------------------------


def group_metadata(group_id: str, group: ConsumerGroup) -> KeyValue:
    value = FieldWriter().i16(VALUE_VERSION).i32(group.group_epoch)
    tags = {_METADATA_HASH_TAG: group.metadata_hash.to_bytes(8, "big", signed=True)}
    return _key(ConsumerRecordType.GROUP_METADATA, group_id), value.tagged(tags).done()


def member_metadata(group_id: str, member: ConsumerMember) -> KeyValue:
    out = FieldWriter().i16(VALUE_VERSION)
    out.compact_nullable_string(member.instance_id).compact_nullable_string(member.rack_id)
    out.compact_string(member.client_id).compact_string(member.client_host)
    out.compact_count(len(member.subscribed_topic_names))
    for name in member.subscribed_topic_names:
        out.compact_string(name)
    out.compact_nullable_string(member.subscribed_topic_regex)
    out.i32(member.rebalance_timeout_ms).compact_nullable_string(member.server_assignor)
    key = _key(ConsumerRecordType.MEMBER_METADATA, group_id, member.member_id)
    tags = {} if member.classic is None else {_CLASSIC_MEMBER_TAG: _classic(member.classic)}
    return key, out.tagged(tags).done()


def _classic(classic: ClassicMembership) -> bytes:
    out = FieldWriter().i32(classic.session_timeout_ms).compact_count(len(classic.protocols))
    for name, metadata in classic.protocols:
        out.compact_string(name).compact_count(len(metadata)).raw(metadata).tagged({})
    return out.tagged({}).done()


def _read_classic(data: bytes) -> ClassicMembership:
    reader = FieldReader(data)
    session_timeout_ms = reader.i32()
    protocols = []
    for _ in range(array_length(reader)):
        name = reader.compact_text()
        protocols.append((name, reader.raw(array_length(reader))))
        reader.tagged()
    reader.tagged()
    reader.end()
    return ClassicMembership(session_timeout_ms, tuple(protocols))


def target_metadata(group_id: str, group: ConsumerGroup) -> KeyValue:
    value = FieldWriter().i16(VALUE_VERSION).i32(group.assignment_epoch).tagged({}).done()
    return _key(ConsumerRecordType.TARGET_ASSIGNMENT_METADATA, group_id), value


def target_member(
    group_id: str, member_id: str, partitions: Mapping[uuid.UUID, frozenset[int]]
) -> KeyValue:
    value = write_topic_partitions(FieldWriter().i16(VALUE_VERSION), partitions).tagged({})
    key = _key(ConsumerRecordType.TARGET_ASSIGNMENT_MEMBER, group_id, member_id)
    return key, value.done()


def current_assignment(group_id: str, member: ConsumerMember) -> KeyValue:
    out = FieldWriter().i16(VALUE_VERSION)
    out.i32(member.member_epoch).i32(member.previous_member_epoch).i8(member.state)
    _write_assignment(out, member.assigned, with_epochs=True)
    _write_assignment(out, member.pending_revocation, with_epochs=True)
    key = _key(ConsumerRecordType.CURRENT_MEMBER_ASSIGNMENT, group_id, member.member_id)
    return key, out.tagged({}).done()


def member_tombstones(group_id: str, member_id: str) -> list[KeyValue]:
    """Kafka's order: current assignment, target, then metadata."""
    kinds = (
        ConsumerRecordType.CURRENT_MEMBER_ASSIGNMENT,
        ConsumerRecordType.TARGET_ASSIGNMENT_MEMBER,
        ConsumerRecordType.MEMBER_METADATA,
    )
    return [(_key(kind, group_id, member_id), None) for kind in kinds]


def group_tombstones(group_id: str, group: ConsumerGroup) -> list[KeyValue]:
    records = [r for member_id in group.members for r in member_tombstones(group_id, member_id)]
    records.append((_key(ConsumerRecordType.TARGET_ASSIGNMENT_METADATA, group_id), None))
    records.append((_key(ConsumerRecordType.GROUP_METADATA, group_id), None))
    return records


def snapshot(group_id: str, group: ConsumerGroup) -> list[KeyValue]:
    """Every record of the group as it is now (after a write that may not have landed)."""
    records = [group_metadata(group_id, group)]
    for member in group.members.values():
        records.append(member_metadata(group_id, member))
        records.append(
            target_member(group_id, member.member_id, group.target.get(member.member_id, {}))
        )
        records.append(current_assignment(group_id, member))
    records.append(target_metadata(group_id, group))
    return records


def _key(kind: ConsumerRecordType, group_id: str, member_id: str = "") -> bytes:
    return encode_consumer_key(ConsumerGroupKey(kind, group_id, member_id))


def _write_assignment(out: FieldWriter, assignment: Assignment, *, with_epochs: bool) -> None:
    out.compact_count(len(assignment))
    for topic, partitions in sorted(assignment.items(), key=lambda item: str(item[0])):
        indexes = sorted(partitions)
        out.uuid(topic).compact_count(len(indexes))
        for index in indexes:
            out.i32(index)
        epochs = FieldWriter().compact_count(len(indexes))
        for index in indexes:
            epochs.i32(partitions[index])
        out.tagged({_ASSIGNMENT_EPOCHS_TAG: epochs.done()} if with_epochs else {})


# --- reading them back -------------------------------------------------------------------------


@dataclass
class LoadedConsumerGroup:
    """A group's records as replay finds them, key by key."""

    group_epoch: int = 0
    metadata_hash: int = 0
    assignment_epoch: int = 0
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    current: dict[str, ConsumerMember] = field(default_factory=dict)  # assignment parts only
    target: dict[str, dict[uuid.UUID, frozenset[int]]] = field(default_factory=dict)
    exists: bool = False

    def apply(self, key: ConsumerGroupKey, value: bytes | None) -> None:
        kind, member_id = key.kind, key.member_id
        if kind is ConsumerRecordType.GROUP_METADATA:
            self.exists = value is not None
            if value is not None:
                self.group_epoch, self.metadata_hash = _read_group_metadata(value)
        elif kind is ConsumerRecordType.TARGET_ASSIGNMENT_METADATA:
            self.assignment_epoch = _read_target_metadata(value) if value is not None else 0
        elif value is None:
            {
                ConsumerRecordType.MEMBER_METADATA: self.members,
                ConsumerRecordType.CURRENT_MEMBER_ASSIGNMENT: self.current,
                ConsumerRecordType.TARGET_ASSIGNMENT_MEMBER: self.target,
            }[kind].pop(member_id, None)  # type: ignore[attr-defined]
        elif kind is ConsumerRecordType.MEMBER_METADATA:
            self.members[member_id] = _read_member_metadata(member_id, value)
        elif kind is ConsumerRecordType.TARGET_ASSIGNMENT_MEMBER:
            self.target[member_id] = _read_target_member(value)
        else:
            self.current[member_id] = _read_current_assignment(member_id, value)

    def build(self) -> ConsumerGroup | None:
        if not self.exists:
            return None
        group = ConsumerGroup(self.group_epoch, self.metadata_hash, self.assignment_epoch)
        for member_id, member in self.members.items():
            current = self.current.get(member_id)
            if current is not None:
                member = dataclasses.replace(
                    member,
                    member_epoch=current.member_epoch,
                    previous_member_epoch=current.previous_member_epoch,
                    state=current.state,
                    assigned=current.assigned,
                    pending_revocation=current.pending_revocation,
                )
            group.put_member(member)
            group.target[member_id] = self.target.get(member_id, {})
        return group


def _read_group_metadata(value: bytes) -> tuple[int, int]:
    reader = FieldReader(value)
    reader.version(VALUE_VERSION)
    epoch = reader.i32()
    tags = reader.tagged()
    reader.end()
    hashed = tags.get(_METADATA_HASH_TAG)
    return epoch, int.from_bytes(hashed, "big", signed=True) if hashed else 0


def _read_target_metadata(value: bytes) -> int:
    reader = FieldReader(value)
    reader.version(VALUE_VERSION)
    epoch = reader.i32()
    reader.tagged()
    reader.end()
    return epoch


def _read_member_metadata(member_id: str, value: bytes) -> ConsumerMember:
    reader = FieldReader(value)
    reader.version(VALUE_VERSION)
    instance_id, rack_id = reader.compact_string(), reader.compact_string()
    client_id, client_host = reader.compact_text(), reader.compact_text()
    names = tuple(reader.compact_text() for _ in range(array_length(reader)))
    regex = reader.compact_string()
    rebalance_timeout_ms, assignor = reader.i32(), reader.compact_string()
    classic = reader.tagged().get(_CLASSIC_MEMBER_TAG)
    reader.end()
    return ConsumerMember(
        member_id,
        instance_id,
        rack_id,
        client_id,
        client_host,
        names,
        regex,
        rebalance_timeout_ms,
        assignor,
        classic=_read_classic(classic) if classic is not None else None,
    )


def _read_target_member(value: bytes) -> dict[uuid.UUID, frozenset[int]]:
    reader = FieldReader(value)
    reader.version(VALUE_VERSION)
    partitions = read_topic_partitions(reader)
    reader.tagged()
    reader.end()
    return partitions


def _read_current_assignment(member_id: str, value: bytes) -> ConsumerMember:
    reader = FieldReader(value)
    reader.version(VALUE_VERSION)
    epoch, previous, state = reader.i32(), reader.i32(), reader.i8()
    assigned = _read_assignment(reader, epoch)
    pending = _read_assignment(reader, epoch)
    reader.tagged()
    reader.end()
    try:
        member_state = MemberState(state)
    except ValueError:
        raise RecordFormatError(f"unknown consumer group member state {state}") from None
    return ConsumerMember(
        member_id,
        member_epoch=epoch,
        previous_member_epoch=previous,
        state=member_state,
        assigned=assigned,
        pending_revocation=pending,
    )


def _read_assignment(reader: FieldReader, default_epoch: int) -> Assignment:
    """Topic partitions with their assignment epochs (tag 0; absent: ``default_epoch``)."""
    assignment: Assignment = {}
    for _ in range(array_length(reader)):
        topic = reader.uuid()
        partitions = [reader.i32() for _ in range(array_length(reader))]
        epochs_field = reader.tagged().get(_ASSIGNMENT_EPOCHS_TAG)
        epochs = [default_epoch] * len(partitions)
        if epochs_field is not None:
            tagged = FieldReader(epochs_field)
            listed = [tagged.i32() for _ in range(array_length(tagged))]
            if len(listed) == len(partitions):
                epochs = listed
        assignment[topic] = dict(zip(partitions, epochs, strict=True))
    return assignment


def replayed_groups(
    records: Iterable[tuple[ConsumerGroupKey, bytes | None]],
) -> dict[str, ConsumerGroup | None]:
    """Apply consumer-group records in log order: group id -> group (None: deleted)."""
    loaded: dict[str, LoadedConsumerGroup] = {}
    for key, value in records:
        loaded.setdefault(key.group_id, LoadedConsumerGroup()).apply(key, value)
    return {group_id: state.build() for group_id, state in loaded.items()}
