"""Offset expiry follows KIP-211: empty groups from when they emptied, standalone per commit."""

from __future__ import annotations

from group_testing import member

from odradek.broker.group.group import Group
from odradek.broker.group.group_state import GroupState
from odradek.broker.group.offsets_retention import expired_offsets
from odradek.broker.group.record_format import CommittedOffset

RETENTION = 1000


def _committed(at: int, expire: int = -1) -> CommittedOffset:
    return CommittedOffset(5, 0, None, at, expire)


def test_an_empty_consumer_groups_offsets_expire_retention_after_it_emptied() -> None:
    group = Group("g", protocol_type="consumer", state_timestamp=500)
    group.offsets = {("t", 0): _committed(100), ("t", 1): _committed(200)}
    assert expired_offsets(group, 1499, RETENTION) == []
    assert sorted(expired_offsets(group, 1500, RETENTION)) == [("t", 0), ("t", 1)]


def test_a_standalone_groups_offsets_expire_each_retention_after_its_commit() -> None:
    group = Group("g")
    group.offsets = {("t", 0): _committed(100), ("t", 1): _committed(900)}
    assert expired_offsets(group, 1100, RETENTION) == [("t", 0)]


def test_an_active_group_keeps_offsets_of_subscribed_topics_only() -> None:
    group = Group("g", protocol_type="consumer", protocol_name="range")
    group.add(member("a", topics=("kept",)))
    group.state = GroupState.STABLE
    group.offsets = {("kept", 0): _committed(0), ("dropped", 0): _committed(0)}
    assert expired_offsets(group, 10_000, RETENTION) == [("dropped", 0)]


def test_an_explicit_expiry_time_wins() -> None:
    group = Group("g")
    group.offsets = {("t", 0): _committed(100, expire=150)}
    assert expired_offsets(group, 149, RETENTION) == []
    assert expired_offsets(group, 150, RETENTION) == [("t", 0)]
