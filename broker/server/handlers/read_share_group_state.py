"""ReadShareGroupState v0: a partition leader asks the share coordinator for the state of
its share-partitions (broker to broker). A share-partition with no state is answered with
state epoch -1."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.share_state_requests import answer_per_partition
from odradek.broker.share.share_persister import NEVER_WRITTEN, wire_batches
from odradek.broker.share.share_state import SharePartitionKey

NOTHING = {"state_epoch": NEVER_WRITTEN, "start_offset": -1, "state_batches": []}


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    async def read(key: SharePartitionKey, _: Any) -> Mapping[str, Any]:
        state = context.shares.coordinator.read(key)
        if state is None:
            return NOTHING
        return {
            "state_epoch": state.state_epoch,
            "start_offset": state.start_offset,
            "state_batches": wire_batches(state.batches),
        }

    return await answer_per_partition(context, request, read, NOTHING)
