"""The controller elects leaders from the ISR only (unless unclean election is allowed)."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from odradek.broker.cluster.leader_election import (
    NO_LEADER,
    elect_for_state,
    holds_partitions,
    plan_elections,
    plan_preferred_leaders,
)
from odradek.broker.cluster.metadata_image import (
    BrokerRegistration,
    MetadataImage,
    PartitionState,
    TopicMetadata,
)


def _state(
    replicas: tuple[int, ...], leader: int, isr: tuple[int, ...], epoch: int = 3
) -> PartitionState:
    return PartitionState(0, replicas, leader, epoch, isr)


def test_dead_leader_is_replaced_by_the_next_in_sync_replica_with_a_higher_epoch() -> None:
    new = elect_for_state(_state((0, 1, 2), 0, (0, 1, 2)), {1, 2}, {1, 2}, unclean=False)
    assert (new.leader, new.leader_epoch, new.isr) == (1, 4, (1, 2))


def test_out_of_sync_replica_is_not_elected() -> None:
    new = elect_for_state(_state((0, 1, 2), 0, (0, 2)), {1}, {1}, unclean=False)
    assert (new.leader, new.leader_epoch, new.isr) == (NO_LEADER, 4, (0, 2))


def test_unclean_election_takes_any_live_replica_when_allowed() -> None:
    new = elect_for_state(_state((0, 1, 2), 0, (0,)), {1, 2}, {1, 2}, unclean=True)
    assert (new.leader, new.isr) == (1, (1,))


def test_offline_partition_comes_back_when_its_last_in_sync_replica_returns() -> None:
    offline = _state((0, 1, 2), NO_LEADER, (2,))
    assert elect_for_state(offline, {0, 1}, {0, 1}, unclean=False) == offline
    back = elect_for_state(offline, {0, 1, 2}, {0, 1, 2}, unclean=False)
    assert (back.leader, back.leader_epoch, back.isr) == (2, 4, (2,))


def test_dead_follower_leaves_the_isr_without_an_epoch_change() -> None:
    new = elect_for_state(_state((0, 1, 2), 0, (0, 1, 2)), {0, 2}, {0, 2}, unclean=False)
    assert (new.leader, new.leader_epoch, new.isr) == (0, 3, (0, 2))


def test_shutting_down_leader_hands_over_but_keeps_leading_when_alone() -> None:
    moved = elect_for_state(_state((0, 1), 0, (0, 1)), {1}, {0, 1}, unclean=False)
    assert (moved.leader, moved.isr) == (1, (1,))
    alone = _state((0,), 0, (0,))
    assert elect_for_state(alone, set(), {0}, unclean=False) == alone


@given(
    replicas=st.permutations(range(5)).map(lambda p: tuple(p[:3])),
    isr_mask=st.lists(st.booleans(), min_size=3, max_size=3),
    live=st.sets(st.integers(0, 4)),
    unclean=st.booleans(),
)
def test_new_leader_is_live_and_clean_unless_unclean_is_allowed(
    replicas: tuple[int, ...], isr_mask: list[bool], live: set[int], unclean: bool
) -> None:
    isr = tuple(r for r, keep in zip(replicas, isr_mask, strict=True) if keep) or replicas[:1]
    state = _state(replicas, isr[0], isr)
    new = elect_for_state(state, live, live, unclean)
    if new.leader != NO_LEADER:
        assert new.leader in live
        assert new.leader in new.isr
        if not unclean:
            assert new.leader in isr
    assert new.leader_epoch >= state.leader_epoch
    assert (new.leader != state.leader) == (new.leader_epoch > state.leader_epoch)


def test_plans_cover_every_topic_and_preferred_leaders_return() -> None:
    topic = TopicMetadata("t", uuid.uuid4(), (PartitionState(0, (0, 1), 1, 5, (0, 1)),))
    image = MetadataImage("c", 0, {}, {"t": topic})
    assert plan_elections(image, {0, 1}, set(), lambda name: False) == []
    [(name, _, new)] = plan_preferred_leaders(image, {0, 1})
    assert (name, new.leader, new.leader_epoch) == ("t", 0, 6)
    [(_, _, elected)] = plan_elections(image, {0}, set(), lambda name: False)
    assert (elected.leader, elected.isr) == (0, (0,))


def test_a_registration_is_fenced_until_the_controller_unfenced_that_same_epoch() -> None:
    brokers = {node: BrokerRegistration(node, "h", 9092, epoch=10 + node) for node in range(3)}
    image = MetadataImage("c", 0, brokers, {}, unfenced={0: 10, 1: 5})
    assert image.fenced_brokers() == {1, 2}  # 1 registered again since; 2 never unfenced


def _image_with(*states: PartitionState) -> MetadataImage:
    return MetadataImage("c", 0, {}, {"t": TopicMetadata("t", uuid.uuid4(), states)})


def test_a_broker_holds_partitions_it_leads_or_is_in_sync_for_under_a_leader() -> None:
    image = _image_with(_state((0, 1, 2), 0, (0, 1)), _state((2, 1), NO_LEADER, (2,)))
    assert holds_partitions(image, 0) and holds_partitions(image, 1)
    # The kept ISR of a leaderless partition does not hold its member back: once
    # unfenced it leads the partition again.
    assert not holds_partitions(image, 2)


def test_replicas_in_an_offline_log_dir_lose_leadership_and_isr_places_only_there() -> None:
    brokers = {node: BrokerRegistration(node, "h", 9092) for node in range(3)}
    brokers[0] = BrokerRegistration(0, "h", 9092, offline_replicas=frozenset({("t", 0)}))
    partitions = (
        PartitionState(0, (0, 1, 2), 0, 3, (0, 1, 2)),
        PartitionState(1, (0, 1, 2), 0, 3, (0, 1, 2)),
    )
    image = MetadataImage("c", 0, brokers, {"t": TopicMetadata("t", uuid.uuid4(), partitions)})
    changes = plan_elections(image, {0, 1, 2}, set(), lambda _: False)
    assert [(topic, new) for topic, _, new in changes] == [
        ("t", PartitionState(0, (0, 1, 2), 1, 4, (1, 2)))
    ]
    # Even while still listed in sync, an offline preferred replica gets no leadership back.
    led_elsewhere = PartitionState(0, (0, 1, 2), 1, 4, (0, 1, 2))
    moved = image.with_topic(
        TopicMetadata("t", image.topics["t"].topic_id, (led_elsewhere, partitions[1]))
    )
    assert [new for _, _, new in plan_preferred_leaders(moved, {0, 1, 2})] == []
