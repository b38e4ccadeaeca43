"""Partition reassignment, as Kafka does it (pure functions).

Starting one makes the replica list the target followed by the replicas to
remove, so new replicas start following; once every added replica is in the
ISR the controller completes it: the removed replicas leave replicas and ISR,
and leadership moves if the leader was one of them.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from odradek.broker.cluster.leader_election import Change
from odradek.broker.cluster.metadata_image import MetadataImage, PartitionState
from odradek.broker.protocol.errors import ErrorCode, KafkaError


def original_replicas(state: PartitionState) -> tuple[int, ...]:
    return tuple(replica for replica in state.replicas if replica not in state.adding)


def start_reassignment(
    state: PartitionState, target: Sequence[int], brokers: Collection[int]
) -> PartitionState:
    if not target or len(set(target)) != len(target):
        raise KafkaError(ErrorCode.invalid_replica_assignment, "target replicas must be distinct")
    unknown = [broker for broker in target if broker not in brokers]
    if unknown:
        raise KafkaError(ErrorCode.invalid_replica_assignment, f"unknown brokers {unknown}")
    original = original_replicas(state)
    adding = tuple(r for r in target if r not in original)
    removing = tuple(r for r in original if r not in target)
    return replace(
        state, replicas=(*target, *removing), adding=adding, removing=removing,
        isr=tuple(r for r in state.isr if r in original),
    )  # fmt: skip


def cancel_reassignment(state: PartitionState) -> PartitionState:
    if not state.reassigning:
        raise KafkaError(ErrorCode.no_reassignment_in_progress, "no reassignment in progress")
    original = original_replicas(state)
    isr = tuple(r for r in state.isr if r in original)
    if state.leader in original:
        return replace(state, replicas=original, isr=isr, adding=(), removing=())
    return replace(
        state, replicas=original, isr=isr, adding=(), removing=(),
        leader=isr[0] if isr else -1, leader_epoch=state.leader_epoch + 1,
    )  # fmt: skip


def complete_reassignment(state: PartitionState, live: Collection[int]) -> PartitionState | None:
    """The finished state once every added replica is in sync, else None."""
    if not state.reassigning or any(replica not in state.isr for replica in state.adding):
        return None
    replicas = tuple(r for r in state.replicas if r not in state.removing)
    isr = tuple(r for r in state.isr if r not in state.removing)
    if state.leader in replicas and state.leader in live:
        return replace(state, replicas=replicas, isr=isr, adding=(), removing=())
    leaders = [r for r in replicas if r in isr and r in live]
    if not leaders:
        return None
    return replace(
        state, replicas=replicas, isr=isr, adding=(), removing=(),
        leader=leaders[0], leader_epoch=state.leader_epoch + 1,
    )  # fmt: skip


def plan_reassignment_completions(image: MetadataImage, live: Collection[int]) -> list[Change]:
    changes = []
    for topic in image.topics.values():
        for state in topic.partitions:
            done = complete_reassignment(state, live)
            if done is not None:
                changes.append((topic.name, state, done))
    return changes
