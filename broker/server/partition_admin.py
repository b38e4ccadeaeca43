"""Admin changes to single partitions: reassignments and leader elections.

Any broker may make them: each is a compare-and-set of the partition's state,
retried when the state moved underneath, so they interleave safely with the
controller's own writes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace

from odradek.broker.cluster.metadata_image import PartitionState
from odradek.broker.cluster.reassignment import cancel_reassignment, start_reassignment
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.server.context import BrokerContext

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 10
PREFERRED = 0
UNCLEAN = 1


async def reassign(
    context: BrokerContext, topic: str, partition: int, target: Sequence[int] | None
) -> None:
    """Start (or with ``target`` None, cancel) moving a partition to ``target``."""
    brokers = context.store.image.brokers

    def change(state: PartitionState) -> PartitionState:
        if target is None:
            return cancel_reassignment(state)
        return start_reassignment(state, target, brokers)

    new = await _update(context, topic, partition, change)
    log.info("%s-%d: reassigning to %s", topic, partition, list(new.replicas))


async def elect_leader(context: BrokerContext, topic: str, partition: int, kind: int) -> None:
    live = context.store.image.brokers

    def change(state: PartitionState) -> PartitionState:
        if kind == PREFERRED:
            preferred = state.replicas[0]
            if state.leader == preferred:
                raise KafkaError(ErrorCode.election_not_needed, "the preferred replica leads")
            if preferred not in live or preferred not in state.isr:
                raise KafkaError(
                    ErrorCode.preferred_leader_not_available,
                    f"preferred replica {preferred} is not live and in sync",
                )
            return replace(state, leader=preferred, leader_epoch=state.leader_epoch + 1)
        if kind != UNCLEAN:
            raise KafkaError(ErrorCode.invalid_request, f"unknown election type {kind}")
        if state.leader >= 0:
            raise KafkaError(ErrorCode.election_not_needed, "the partition has a leader")
        survivors = [replica for replica in state.replicas if replica in live]
        if not survivors:
            raise KafkaError(ErrorCode.eligible_leaders_not_available, "no live replica")
        return replace(
            state, leader=survivors[0], leader_epoch=state.leader_epoch + 1, isr=(survivors[0],)
        )

    await _update(context, topic, partition, change)


async def _update(
    context: BrokerContext,
    topic: str,
    partition: int,
    change: Callable[[PartitionState], PartitionState],
) -> PartitionState:
    for _ in range(MAX_ATTEMPTS):
        metadata = context.store.image.topics.get(topic)
        if metadata is None or not 0 <= partition < len(metadata.partitions):
            raise KafkaError(
                ErrorCode.unknown_topic_or_partition, f"no partition {topic}-{partition}"
            )
        current = metadata.partitions[partition]
        new = change(current)
        if new == current or await context.store.update_partition(topic, current, new):
            return new
    raise KafkaError(ErrorCode.concurrent_transactions, "the partition kept changing; try again")
