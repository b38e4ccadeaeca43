"""A new coordinator rebuilds groups from their records in log order, tombstones included."""

from __future__ import annotations

from group_testing import member

from odradek.broker.cluster.coordinator_log import LoggedRecord
from odradek.broker.group.group import Group
from odradek.broker.group.group_catalog import replay
from odradek.broker.group.group_state import GroupState
from odradek.broker.group.record_format import (
    CommittedOffset,
    GroupKey,
    OffsetKey,
    encode_group,
    encode_key,
    encode_offset,
)
from odradek.broker.protocol.transaction_markers import MarkerType, TransactionMarker


def _offset(group: str, partition: int, offset: int | None, producer_id: int = -1) -> LoggedRecord:
    key = encode_key(OffsetKey(group, "t", partition))
    value = None if offset is None else encode_offset(CommittedOffset(offset, 0, "m", 1))
    return LoggedRecord(key, value, producer_id)


def test_the_last_commit_wins_and_tombstones_remove() -> None:
    records = [_offset("g", 0, 1), _offset("g", 1, 5), _offset("g", 0, 9), _offset("g", 1, None)]
    (group,) = replay(records)
    assert group.group_id == "g" and group.is_(GroupState.EMPTY)
    assert group.protocol_type is None  # only offsets: a standalone consumer's group
    assert {key: value.offset for key, value in group.offsets.items()} == {("t", 0): 9}


def test_group_metadata_is_restored_and_a_deleted_group_stays_gone() -> None:
    live = Group("live", protocol_type="consumer", generation=2, protocol_name="range")
    live.add(member("m1"))
    records = [
        LoggedRecord(encode_key(GroupKey("live")), encode_group(live.stored())),
        _offset("live", 0, 3),
        LoggedRecord(encode_key(GroupKey("gone")), encode_group(Group("gone").stored())),
        _offset("gone", 0, 1),
        _offset("gone", 0, None),
        LoggedRecord(encode_key(GroupKey("gone")), None),
    ]
    (group,) = replay(records)
    assert group.group_id == "live" and group.is_(GroupState.STABLE)
    assert list(group.members) == ["m1"] and group.offsets[("t", 0)].offset == 3


def test_an_unreadable_record_is_skipped() -> None:
    (group,) = replay([LoggedRecord(b"\x00\x09junk", b""), _offset("g", 0, 4)])
    assert group.offsets[("t", 0)].offset == 4


def test_an_unreadable_offset_value_leaves_its_partition_without_an_offset() -> None:
    key = encode_key(OffsetKey("g", "t", 1))
    (group,) = replay([_offset("g", 0, 4), _offset("g", 1, 2), LoggedRecord(key, b"\x00")])
    assert {key: value.offset for key, value in group.offsets.items()} == {("t", 0): 4}


def test_transactional_offsets_count_at_their_commit_marker_and_go_at_their_abort() -> None:
    records = [
        _offset("g", 0, 1),
        _offset("g", 0, 5, producer_id=7),  # committed below
        _offset("g", 1, 6, producer_id=8),  # aborted below
        _offset("g", 2, 7, producer_id=9),  # still open
        TransactionMarker(7, 0, MarkerType.COMMIT, 0),
        TransactionMarker(8, 0, MarkerType.ABORT, 0),
    ]
    (group,) = replay(records)
    assert {key: value.offset for key, value in group.offsets.items()} == {("t", 0): 5}
    assert {
        p: {k: v.offset for k, v in o.items()} for p, o in group.transactional_offsets.items()
    } == {9: {("t", 2): 7}}
