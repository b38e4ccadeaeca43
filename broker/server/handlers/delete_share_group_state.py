"""DeleteShareGroupState v0: forget share-partitions' state (their group's offsets or the
group were deleted; broker to broker)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.share_state_requests import answer_per_partition
from odradek.broker.share.share_state import SharePartitionKey


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    async def delete(key: SharePartitionKey, _: Any) -> Mapping[str, Any]:
        await context.shares.coordinator.delete(key)
        return {}

    return await answer_per_partition(context, request, delete, {})
