"""OffsetDelete v0: drop a group's committed offsets of topics it no longer consumes."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import awaited_answer_or_error
from odradek.broker.server.handlers.offset_commit import by_topic


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    partitions = [(topic.name, item.partition_index) for topic in body.topics
                  for item in topic.partitions]  # fmt: skip

    async def answer() -> dict[str, Any]:
        return {"topics": by_topic(await context.groups.delete_offsets(body.group_id, partitions))}

    return {"throttle_time": 0, **await awaited_answer_or_error(answer, {"topics": []})}
