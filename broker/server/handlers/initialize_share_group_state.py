"""InitializeShareGroupState v0: start share-partitions afresh at a given offset in a new
state epoch (an admin's AlterShareGroupOffsets, relayed by the broker that took it; broker
to broker). A state epoch not above the stored one is FENCED_STATE_EPOCH."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.share_state_requests import answer_per_partition
from odradek.broker.share.share_state import SharePartitionKey


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    async def initialize(key: SharePartitionKey, item: Any) -> Mapping[str, Any]:
        await context.shares.coordinator.initialize(key, item.state_epoch, item.start_offset)
        return {}

    return await answer_per_partition(context, request, initialize, {})
