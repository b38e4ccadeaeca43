"""Group membership, protocol choice and persistence, without timers or I/O."""

from __future__ import annotations

import pytest
from group_testing import member, subscription

from odradek.broker.group.consumer_protocol import subscribed_topics
from odradek.broker.group.group import Group
from odradek.broker.group.group_state import GroupState, IllegalStateTransition


def test_only_kafkas_transitions_are_allowed() -> None:
    group = Group("g")
    with pytest.raises(IllegalStateTransition):
        group.transition(GroupState.STABLE, 1)
    for state in (
        GroupState.PREPARING_REBALANCE,
        GroupState.COMPLETING_REBALANCE,
        GroupState.STABLE,
        GroupState.PREPARING_REBALANCE,
        GroupState.EMPTY,
        GroupState.DEAD,
    ):
        group.transition(state, 2)
    assert group.state_timestamp == 2


def test_first_member_leads_and_the_next_one_takes_over_when_it_leaves() -> None:
    group = Group("g")
    for name in ("a", "b", "c"):
        group.add(member(name))
    assert group.leader_id == "a"
    group.remove("a")
    assert group.leader_id == "b"
    group.remove("b")
    group.remove("c")
    assert group.leader_id is None and group.is_empty


def test_protocol_is_chosen_by_vote_among_those_everyone_supports() -> None:
    group = Group("g")
    group.add(member("a", ("roundrobin", "range")))
    group.add(member("b", ("range", "roundrobin", "sticky")))
    group.add(member("c", ("range", "roundrobin")))
    assert group.candidate_protocols() == {"range", "roundrobin"}
    assert group.select_protocol() == "range"


def test_a_tied_vote_goes_to_the_leaders_preference() -> None:
    group = Group("g")
    group.add(member("a", ("roundrobin", "range")))
    group.add(member("b", ("range", "roundrobin")))
    assert group.select_protocol() == "roundrobin"


def test_joining_needs_the_groups_protocol_type_and_a_common_protocol() -> None:
    group = Group("g")
    assert not group.supports("consumer", ())
    assert group.supports("consumer", ("range",))
    group.add(member("a", ("range",)))
    assert not group.supports("connect", ("range",))
    assert not group.supports("consumer", ("roundrobin",))
    assert group.supports("consumer", ("roundrobin", "range"))


def test_a_static_member_keeps_its_place_under_a_new_member_id() -> None:
    group = Group("g")
    group.add(member("old", instance="i1"))
    group.add(member("other"))
    group.members["old"].assignment = b"mine"
    group.replace_static_member("old", "new")
    assert list(group.members) == ["new", "other"]
    assert group.leader_id == "new"
    assert group.members["new"].assignment == b"mine"
    assert group.is_fenced("old", "i1")
    assert not group.is_fenced("new", "i1")
    assert not group.is_fenced("anyone", None)


def test_subscribed_topics_are_read_from_the_chosen_protocols_metadata() -> None:
    group = Group("g")
    group.add(member("a", topics=("t1",)))
    group.add(member("b", topics=("t2", "t3")))
    assert group.subscribed_topics() is None  # no protocol chosen yet
    group.protocol_name = "range"
    assert group.subscribed_topics() == {"t1", "t2", "t3"}


def test_subscription_parsing_refuses_what_is_not_a_subscription() -> None:
    assert subscribed_topics(subscription("a", "b")) == {"a", "b"}
    assert subscribed_topics(b"\x00") is None
    assert subscribed_topics(b"\x00\x00\x00\x00\x00\x05\x00\x01a") is None


def test_a_stored_group_is_restored_stable_with_its_members_and_assignments() -> None:
    group = Group("g", protocol_type="consumer")
    group.add(member("a", instance="i1"))
    group.add(member("b"))
    group.generation, group.protocol_name = 4, "range"
    group.members["a"].assignment = b"A"
    restored = Group.restored("g", group.stored())
    assert restored.state is GroupState.STABLE
    assert (restored.generation, restored.protocol_name, restored.leader_id) == (4, "range", "a")
    assert restored.members["a"].assignment == b"A"
    assert restored.static_member_id("i1") == "a"
    assert restored.subscribed_topics() == {"t"}


def test_a_stored_group_without_members_is_restored_empty() -> None:
    group = Group("g", protocol_type="consumer", generation=3)
    assert Group.restored("g", group.stored()).state is GroupState.EMPTY
