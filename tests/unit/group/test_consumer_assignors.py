"""The KIP-848 server-side assignors: balance, stickiness, rack preference, ranges."""

from __future__ import annotations

import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from odradek.broker.group.consumer_assignors import (
    AssignmentSpec,
    MemberSubscription,
    TargetAssignment,
    TopicLayout,
    range_assignor,
    uniform,
)

A, B = uuid.UUID(int=1), uuid.UUID(int=2)


def _counts(target: TargetAssignment) -> dict[str, int]:
    return {m: sum(len(p) for p in topics.values()) for m, topics in target.items()}


def _owners(target: TargetAssignment) -> dict[tuple[uuid.UUID, int], str]:
    owners: dict[tuple[uuid.UUID, int], str] = {}
    for member, topics in target.items():
        for topic, partitions in topics.items():
            for partition in partitions:
                assert (topic, partition) not in owners, "a partition has two owners"
                owners[(topic, partition)] = member
    return owners


def test_uniform_spreads_every_partition_evenly() -> None:
    members = {m: MemberSubscription(frozenset({A, B})) for m in ("m1", "m2", "m3")}
    spec = AssignmentSpec(members, {A: TopicLayout(4), B: TopicLayout(3)}, {})
    target = uniform(spec)
    assert len(_owners(target)) == 7
    assert sorted(_counts(target).values()) == [2, 2, 3]


def test_uniform_keeps_partitions_where_they_are_when_a_member_joins() -> None:
    topics = {A: TopicLayout(6)}
    two = {m: MemberSubscription(frozenset({A})) for m in ("m1", "m2")}
    before = uniform(AssignmentSpec(two, topics, {}))
    three = {**two, "m3": MemberSubscription(frozenset({A}))}
    after = uniform(AssignmentSpec(three, topics, before))
    assert _counts(after) == {"m1": 2, "m2": 2, "m3": 2}
    for member in ("m1", "m2"):
        assert after[member][A] <= before[member][A], "a partition moved between old members"


def test_uniform_balances_members_with_different_subscriptions() -> None:
    members = {
        "both": MemberSubscription(frozenset({A, B})),
        "only-a": MemberSubscription(frozenset({A})),
    }
    target = uniform(AssignmentSpec(members, {A: TopicLayout(4), B: TopicLayout(2)}, {}))
    assert target["only-a"].keys() <= {A}
    assert _counts(target) == {"both": 3, "only-a": 3}


def test_uniform_prefers_a_member_in_a_rack_holding_the_partition() -> None:
    layout = TopicLayout(2, (frozenset({"east"}), frozenset({"west"})))
    members = {
        "m-west": MemberSubscription(frozenset({A}), rack="west"),
        "m-east": MemberSubscription(frozenset({A}), rack="east"),
    }
    target = uniform(AssignmentSpec(members, {A: layout}, {}))
    assert target == {"m-east": {A: frozenset({0})}, "m-west": {A: frozenset({1})}}


def test_range_gives_each_member_contiguous_ranges_that_line_up_across_topics() -> None:
    members = {m: MemberSubscription(frozenset({A, B})) for m in ("m1", "m2")}
    target = range_assignor(AssignmentSpec(members, {A: TopicLayout(5), B: TopicLayout(5)}, {}))
    assert target == {
        "m1": {A: frozenset({0, 1, 2}), B: frozenset({0, 1, 2})},
        "m2": {A: frozenset({3, 4}), B: frozenset({3, 4})},
    }


@settings(max_examples=60)
@given(
    st.lists(st.integers(1, 12), min_size=1, max_size=3),
    st.integers(1, 6),
    st.randoms(use_true_random=False),
)
def test_uniform_assigns_each_subscribed_partition_once_and_evenly(
    partition_counts: list[int], member_count: int, random: object
) -> None:
    topics = {uuid.UUID(int=i + 1): TopicLayout(n) for i, n in enumerate(partition_counts)}
    members = {f"m{i}": MemberSubscription(frozenset(topics)) for i in range(member_count)}
    first = uniform(AssignmentSpec(members, topics, {}))
    assert len(_owners(first)) == sum(partition_counts)
    counts = _counts(first).values()
    assert max(counts) - min(counts) <= 1
    # one member leaves: the others keep what they had
    survivors = dict(list(members.items())[1:])
    if survivors:
        second = uniform(AssignmentSpec(survivors, topics, first))
        assert len(_owners(second)) == sum(partition_counts)
        for member in survivors:
            for topic, partitions in first[member].items():
                assert partitions <= second[member].get(topic, frozenset())


def test_uniform_rebalancing_hands_a_newcomer_the_partitions_of_its_rack() -> None:
    layout = TopicLayout(4, tuple(frozenset({rack}) for rack in ("east", "west") * 2))
    alone = {"m-east": MemberSubscription(frozenset({A}), rack="east")}
    before = uniform(AssignmentSpec(alone, {A: layout}, {}))
    both = {**alone, "m-west": MemberSubscription(frozenset({A}), rack="west")}
    after = uniform(AssignmentSpec(both, {A: layout}, before))
    assert after == {"m-east": {A: frozenset({0, 2})}, "m-west": {A: frozenset({1, 3})}}
