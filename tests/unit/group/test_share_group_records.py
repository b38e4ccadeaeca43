"""Share groups in ``__consumer_offsets``: Kafka's record types 10-14, byte for byte, and a
new coordinator replaying them (tombstones included)."""

from __future__ import annotations

import uuid

from odradek.broker.cluster.coordinator_log import LoggedRecord
from odradek.broker.group import share_group_records as records
from odradek.broker.group.group_catalog import replay
from odradek.broker.group.record_format import decode_key
from odradek.broker.group.share_group import ShareGroup, ShareMember
from odradek.broker.group.share_group_records import ShareGroupKey, ShareRecordType

T = uuid.UUID(int=7)


def _group() -> ShareGroup:
    members = {
        "a": ShareMember("a", "r1", "c", "/h", ("t",), 3, 2, {T: frozenset({0, 2})}),
        "b": ShareMember("b", None, "c", "/h", ("t", "u"), 3, 0, {T: frozenset({1})}),
    }
    target = {"a": {T: frozenset({0, 2})}, "b": {T: frozenset({1})}}
    return ShareGroup(3, -42, 3, target, members)


def _logged(pairs: list[tuple[bytes, bytes | None]]) -> list[LoggedRecord]:
    return [LoggedRecord(key, value) for key, value in pairs]


def test_keys_are_kafkas_type_then_group_then_member() -> None:
    key, _ = records.member_metadata("g", ShareMember("m"))
    assert key == b"\x00\x0a" + b"\x00\x01g" + b"\x00\x01m"
    key, _ = records.group_metadata("g", ShareGroup())
    assert key == b"\x00\x0b\x00\x01g"
    assert decode_key(key) == ShareGroupKey(ShareRecordType.GROUP_METADATA, "g")


def test_values_are_kafkas_flexible_version_0() -> None:
    _, value = records.group_metadata("g", ShareGroup(group_epoch=5, metadata_hash=1))
    assert value == b"\x00\x00" + b"\x00\x00\x00\x05" + (1).to_bytes(8, "big") + b"\x00"
    _, value = records.member_metadata("g", ShareMember("m", None, "c", "h", ("t",)))
    # rack null, client id, client host, one topic name, no tagged fields
    assert value == b"\x00\x00" + b"\x00" + b"\x02c" + b"\x02h" + b"\x02\x02t" + b"\x00"
    member = ShareMember("m", member_epoch=4, previous_member_epoch=3, assigned={T: frozenset({1})})
    _, value = records.current_assignment("g", member)
    assert value == (
        b"\x00\x00" + b"\x00\x00\x00\x04" + b"\x00\x00\x00\x03" + b"\x00"  # epochs, state
        + b"\x02" + T.bytes + b"\x02\x00\x00\x00\x01" + b"\x00"  # one topic, partition 1
        + b"\x00"
    )  # fmt: skip


def test_a_snapshot_replays_to_the_same_group() -> None:
    group = _group()
    (loaded,) = replay(_logged(records.snapshot("g", group)))
    assert loaded.group_type == "share" and loaded.share is not None
    assert loaded.share == group


def test_a_member_that_left_and_a_deleted_group_are_gone_after_replay() -> None:
    group = _group()
    history = records.snapshot("g", group) + records.snapshot("gone", group)
    history += records.member_tombstones("g", "b")
    history += records.group_tombstones("gone", group)
    (loaded,) = replay(_logged(history))
    assert loaded.group_id == "g" and loaded.share is not None
    assert set(loaded.share.members) == {"a"} and set(loaded.share.target) == {"a"}
