"""A member's way to its target assignment: revoke first, then take what is free."""

from __future__ import annotations

import uuid

from odradek.broker.group.consumer_group import ConsumerGroup, ConsumerGroupState
from odradek.broker.group.consumer_member import ConsumerMember, MemberState
from odradek.broker.group.consumer_reconciliation import Reconciliation

T = uuid.UUID(int=7)
SUBSCRIBED = frozenset({T})


def _member(member_id: str, epoch: int, *partitions: int) -> ConsumerMember:
    return ConsumerMember(
        member_id, member_epoch=epoch, assigned={T: dict.fromkeys(partitions, epoch)}
    )


def test_a_member_revokes_before_it_moves_to_the_new_epoch() -> None:
    group = ConsumerGroup()
    group.put_member(_member("a", 1, 0, 1, 2, 3))
    step = Reconciliation(
        2, {T: frozenset({0, 1})}, SUBSCRIBED, group.owner_epoch, {T: [0, 1, 2, 3]}
    )
    revoking = step.next(group.members["a"])
    assert revoking.state is MemberState.UNREVOKED_PARTITIONS
    assert revoking.member_epoch == 1
    assert revoking.assigned == {T: {0: 1, 1: 1}}
    assert revoking.pending_revocation == {T: {2: 1, 3: 1}}
    group.put_member(revoking)
    # still reporting the revoked partitions: nothing moves
    still = Reconciliation(2, {T: frozenset({0, 1})}, SUBSCRIBED, group.owner_epoch, {T: [0, 1, 2]})
    assert still.next(revoking) is revoking
    done = Reconciliation(2, {T: frozenset({0, 1})}, SUBSCRIBED, group.owner_epoch, {T: [0, 1]})
    stable = done.next(revoking)
    assert (stable.state, stable.member_epoch, stable.previous_member_epoch) == (
        MemberState.STABLE,
        2,
        1,
    )
    assert stable.assigned == {T: {0: 1, 1: 1}} and not stable.pending_revocation


def test_a_partition_another_member_still_revokes_is_not_given_twice() -> None:
    group = ConsumerGroup(group_epoch=2, assignment_epoch=2)
    group.put_member(
        ConsumerMember(
            "old",
            member_epoch=1,
            state=MemberState.UNREVOKED_PARTITIONS,
            assigned={T: {0: 1}},
            pending_revocation={T: {1: 1}},
        )
    )
    group.put_member(ConsumerMember("new", member_epoch=0))
    step = Reconciliation(2, {T: frozenset({1})}, SUBSCRIBED, group.owner_epoch, {})
    waiting = step.next(group.members["new"])
    assert waiting.state is MemberState.UNRELEASED_PARTITIONS
    assert waiting.member_epoch == 2 and waiting.assigned == {}
    group.put_member(waiting)
    assert group.state is ConsumerGroupState.RECONCILING
    # the old member gives partition 1 up; the new one gets it at its next heartbeat
    released = Reconciliation(2, {T: frozenset({0})}, SUBSCRIBED, group.owner_epoch, {T: [0]})
    group.put_member(released.next(group.members["old"]))
    taken = Reconciliation(2, {T: frozenset({1})}, SUBSCRIBED, group.owner_epoch, {}).next(waiting)
    assert taken.state is MemberState.STABLE and taken.assigned == {T: {1: 2}}
    group.put_member(taken)
    assert group.state is ConsumerGroupState.STABLE


def test_a_member_that_no_longer_owns_what_it_should_revoke_moves_on_at_once() -> None:
    member = _member("a", 3, 0, 1)
    step = Reconciliation(4, {T: frozenset({0})}, SUBSCRIBED, lambda *_: -1, {T: [0]})
    moved = step.next(member)
    assert (moved.state, moved.member_epoch, moved.assigned) == (MemberState.STABLE, 4, {T: {0: 3}})


def test_unsubscribing_from_a_topic_revokes_its_partitions_within_the_epoch() -> None:
    member = _member("a", 5, 0, 1)
    step = Reconciliation(5, {T: frozenset({0, 1})}, frozenset(), lambda *_: -1, None, True)
    dropped = step.next(member)
    assert dropped.state is MemberState.UNREVOKED_PARTITIONS
    assert dropped.assigned == {} and dropped.pending_revocation == {T: {0: 5, 1: 5}}
