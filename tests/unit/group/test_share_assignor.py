"""The simple assignor of share groups: every partition assigned, shared by several members
when they outnumber the partitions, balanced, sticky where balance allows."""

from __future__ import annotations

import uuid
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from odradek.broker.group.consumer_assignors import (
    AssignmentSpec,
    MemberSubscription,
    TargetAssignment,
    TopicLayout,
)
from odradek.broker.group.share_assignor import simple_assignment

A, B = uuid.UUID(int=1), uuid.UUID(int=2)


def _counts(target: TargetAssignment) -> list[int]:
    return [sum(len(p) for p in topics.values()) for topics in target.values()]


def _sharing(target: TargetAssignment) -> Counter[tuple[uuid.UUID, int]]:
    return Counter(
        (topic, partition)
        for topics in target.values()
        for topic, partitions in topics.items()
        for partition in partitions
    )


def _members(count: int, *topics: uuid.UUID) -> dict[str, MemberSubscription]:
    return {f"m{i}": MemberSubscription(frozenset(topics)) for i in range(count)}


def test_fewer_members_than_partitions_each_partition_goes_to_one_member() -> None:
    spec = AssignmentSpec(_members(2, A, B), {A: TopicLayout(3), B: TopicLayout(2)}, {})
    target = simple_assignment(spec, homogeneous=True)
    assert set(_sharing(target).values()) == {1} and len(_sharing(target)) == 5
    assert sorted(_counts(target)) == [2, 3]


def test_more_members_than_partitions_share_each_partition() -> None:
    spec = AssignmentSpec(_members(5, A), {A: TopicLayout(2)}, {})
    target = simple_assignment(spec, homogeneous=True)
    # ceil(5 / 2) = 3 members per partition, 6 assignments over 5 members
    assert _sharing(target) == {(A, 0): 3, (A, 1): 3}
    assert sorted(_counts(target)) == [1, 1, 1, 1, 2]


def test_a_newcomer_takes_only_what_balance_needs() -> None:
    spec = AssignmentSpec(_members(2, A), {A: TopicLayout(4)}, {})
    before = simple_assignment(spec, homogeneous=True)
    grown = AssignmentSpec(_members(3, A), {A: TopicLayout(4)}, before)
    after = simple_assignment(grown, homogeneous=True)
    assert after["m0"] == before["m0"]  # its quota is still 2
    assert after["m1"][A] < before["m1"][A] and len(after["m2"][A]) == 1
    assert len(_sharing(after)) == 4


def test_unsubscribed_topics_leave_the_target() -> None:
    current = {"m0": {A: frozenset({0, 1}), B: frozenset({0})}}
    spec = AssignmentSpec(_members(1, A), {A: TopicLayout(2)}, current)
    assert simple_assignment(spec, homogeneous=True) == {"m0": {A: frozenset({0, 1})}}


def test_different_subscriptions_share_each_topic_among_its_own_subscribers() -> None:
    members = {
        "x": MemberSubscription(frozenset({A})),
        "y": MemberSubscription(frozenset({B})),
        "z": MemberSubscription(frozenset({A, B})),
    }
    spec = AssignmentSpec(members, {A: TopicLayout(4), B: TopicLayout(1)}, {})
    target = simple_assignment(spec, homogeneous=False)
    assert set(target["x"]) == {A} and set(target["y"]) == {B}
    assert len(target["x"][A]) == len(target["z"][A]) == 2
    assert target["x"][A] | target["z"][A] == frozenset(range(4))
    # B's one partition goes to both its subscribers
    assert target["y"][B] == target["z"][B] == frozenset({0})


def test_members_subscribed_to_nothing_get_nothing() -> None:
    spec = AssignmentSpec(_members(2), {}, {})
    assert simple_assignment(spec, homogeneous=True) == {"m0": {}, "m1": {}}


@given(st.integers(1, 4), st.integers(1, 8), st.integers(1, 12))
def test_a_fresh_assignment_covers_every_partition_evenly(
    topics: int, partitions: int, members: int
) -> None:
    layouts = {uuid.UUID(int=t + 1): TopicLayout(partitions) for t in range(topics)}
    spec = AssignmentSpec(_members(members, *layouts), layouts, {})
    target = simple_assignment(spec, homogeneous=True)
    total = topics * partitions
    sharing = -(-members // total)
    assert set(_sharing(target).values()) == {sharing} and len(_sharing(target)) == total
    counts = _counts(target)
    assert max(counts) - min(counts) <= 1


@st.composite
def _current_targets(draw: st.DrawFn) -> tuple[int, int, TargetAssignment]:
    partitions = draw(st.integers(1, 6))
    members = draw(st.integers(1, 9))
    subsets = st.frozensets(st.integers(0, partitions + 1))  # stale partitions too
    current = {f"m{i}": {A: draw(subsets)} for i in range(members)}
    return partitions, members, current


@given(_current_targets())
def test_from_any_current_target_the_next_is_balanced_and_stable(
    case: tuple[int, int, TargetAssignment],
) -> None:
    partitions, members, current = case
    spec = AssignmentSpec(_members(members, A), {A: TopicLayout(partitions)}, current)
    target = simple_assignment(spec, homogeneous=True)
    sharing = _sharing(target)
    assert set(sharing) == {(A, p) for p in range(partitions)}, "a partition is unassigned"
    assert max(sharing.values()) <= -(-members // partitions)
    assert max(_counts(target)) <= -(-sum(sharing.values()) // members)
    again = AssignmentSpec(spec.members, spec.topics, target)
    assert simple_assignment(again, homogeneous=True) == target
