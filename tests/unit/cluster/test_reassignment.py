"""Reassignment: new replicas follow first; the old ones leave once the new are in sync."""

from __future__ import annotations

import pytest

from odradek.broker.cluster.metadata_image import PartitionState
from odradek.broker.cluster.reassignment import (
    cancel_reassignment,
    complete_reassignment,
    start_reassignment,
)
from odradek.broker.protocol.errors import ErrorCode, KafkaError

BROKERS = range(6)
STATE = PartitionState(0, (0, 1, 2), leader=0, leader_epoch=4, isr=(0, 1, 2))


def test_starting_puts_the_target_first_and_keeps_the_old_replicas_until_done() -> None:
    moving = start_reassignment(STATE, [3, 4, 5], BROKERS)
    assert moving.replicas == (3, 4, 5, 0, 1, 2)
    assert (moving.adding, moving.removing) == ((3, 4, 5), (0, 1, 2))
    assert moving.leader == 0
    assert complete_reassignment(moving, set(BROKERS)) is None


def test_completion_drops_the_old_replicas_and_moves_leadership_off_them() -> None:
    moving = start_reassignment(STATE, [3, 4, 5], BROKERS)
    caught_up = PartitionState(0, moving.replicas, 0, 4, (0, 1, 2, 3, 4, 5), (3, 4, 5), (0, 1, 2))
    done = complete_reassignment(caught_up, set(BROKERS))
    assert done is not None
    assert (done.replicas, done.isr, done.leader, done.leader_epoch) == ((3, 4, 5), (3, 4, 5), 3, 5)
    assert not done.reassigning


def test_overlapping_target_keeps_the_leader_and_its_epoch() -> None:
    moving = start_reassignment(STATE, [0, 1, 3], BROKERS)
    assert (moving.adding, moving.removing) == ((3,), (2,))
    synced = PartitionState(0, moving.replicas, 0, 4, (0, 1, 2, 3), moving.adding, moving.removing)
    done = complete_reassignment(synced, set(BROKERS))
    assert done is not None
    assert (done.replicas, done.leader, done.leader_epoch) == ((0, 1, 3), 0, 4)


def test_cancel_restores_the_original_replicas() -> None:
    moving = start_reassignment(STATE, [3, 4, 5], BROKERS)
    assert cancel_reassignment(moving).replicas == (0, 1, 2)
    with pytest.raises(KafkaError) as raised:
        cancel_reassignment(STATE)
    assert raised.value.code is ErrorCode.no_reassignment_in_progress


@pytest.mark.parametrize("target", [[], [3, 3], [9]])
def test_invalid_targets_are_refused(target: list[int]) -> None:
    with pytest.raises(KafkaError) as raised:
        start_reassignment(STATE, target, BROKERS)
    assert raised.value.code is ErrorCode.invalid_replica_assignment
