"""WriteShareGroupState v0: a partition leader writes the state of its share-partitions
to their share coordinator, answered once replicated (broker to broker). A write of an
older state or leader epoch than the stored one is fenced."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.share_state_requests import answer_per_partition
from odradek.broker.share.share_persister import batches_of
from odradek.broker.share.share_state import SharePartitionKey, ShareState


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    async def write(key: SharePartitionKey, written: Any) -> Mapping[str, Any]:
        state = ShareState(
            written.start_offset,
            written.state_epoch,
            written.leader_epoch,
            batches_of(written.state_batches),
        )
        await context.shares.coordinator.write(key, state)
        return {}

    return await answer_per_partition(context, request, write, {})
