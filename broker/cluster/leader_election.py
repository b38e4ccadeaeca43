"""The controller's decisions about partition leadership (pure functions).

When brokers die or start shutting down, or a replica's log dir goes offline, each
affected partition gets a new leader from its in-sync replicas (preferred order first)
and a leader epoch one higher; dead, departing and offline replicas leave the ISR. With
no in-sync replica left, the partition goes offline (leader -1) unless the topic allows
unclean election, in which case any live replica leads. Preferred-leader election moves
leadership back to the first replica once it is in sync again.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from dataclasses import replace

from odradek.broker.cluster.metadata_image import MetadataImage, PartitionState

NO_LEADER = -1
Change = tuple[str, PartitionState, PartitionState]  # topic, current state, new state


def elect_for_state(
    state: PartitionState, eligible: Collection[int], live: Collection[int], unclean: bool
) -> PartitionState:
    """The state ``state`` should have, given eligible (live, staying) and live brokers."""
    isr = tuple(replica for replica in state.isr if replica in eligible)
    if state.leader in eligible:
        if state.leader not in isr:
            isr = (state.leader, *isr)
        return replace(state, isr=isr)
    candidates = [replica for replica in state.replicas if replica in isr]
    if candidates:
        return replace(state, leader=candidates[0], leader_epoch=state.leader_epoch + 1, isr=isr)
    if state.leader in live:
        # Shutting down with nobody in sync to take over: it keeps leading, without the
        # replicas that are gone.
        return replace(state, isr=tuple(r for r in state.isr if r in live))
    if unclean:
        survivors = [replica for replica in state.replicas if replica in eligible]
        if survivors:
            return replace(
                state, leader=survivors[0], leader_epoch=state.leader_epoch + 1,
                isr=(survivors[0],),
            )  # fmt: skip
    if state.leader == NO_LEADER:
        return state
    # Keep the last ISR so that one of its members, and no other replica, leads on return.
    return replace(state, leader=NO_LEADER, leader_epoch=state.leader_epoch + 1)


def plan_elections(
    image: MetadataImage,
    live: Collection[int],
    shutting_down: Collection[int],
    unclean_allowed: Callable[[str], bool],
) -> list[Change]:
    """Leadership and ISR changes that the live and departing brokers, and the replicas in
    offline log dirs, call for."""
    eligible = {broker for broker in live if broker not in shutting_down}
    offline = image.offline_holders()
    changes = []
    for topic, state in _states(image):
        lost = offline.get((topic, state.partition), frozenset())
        unclean = unclean_allowed(topic)
        new = elect_for_state(state, eligible - lost, set(live) - lost, unclean)
        if new != state:
            changes.append((topic, state, new))
    return changes


def plan_preferred_leaders(image: MetadataImage, live: Collection[int]) -> list[Change]:
    """Move leadership to each partition's first replica where it is live and in sync."""
    changes = []
    offline = image.offline_holders()
    for topic, state in _states(image):
        preferred = state.replicas[0]
        usable = preferred in live and preferred not in offline.get((topic, state.partition), ())
        if state.leader != preferred and usable and preferred in state.isr:
            new = replace(state, leader=preferred, leader_epoch=state.leader_epoch + 1)
            changes.append((topic, state, new))
    return changes


def holds_partitions(image: MetadataImage, broker: int) -> bool:
    """Whether ``broker`` leads a partition, or is in the ISR of one that has a leader.

    The ISR of a leaderless partition is its last, kept so that one of its members
    leads on return: a broker may be unfenced while in it.
    """
    return any(
        state.leader == broker or (state.leader != NO_LEADER and broker in state.isr)
        for _, state in _states(image)
    )


def _states(image: MetadataImage) -> Iterator[tuple[str, PartitionState]]:
    for topic in image.topics.values():
        for state in topic.partitions:
            yield topic.name, state
