"""OffsetDelete v0: drop a group's committed offsets of topics it no longer consumes."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of
from odradek.broker.server.handlers.offset_commit import by_topic


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    partitions = [(topic.name, item.partition_index) for topic in body.topics
                  for item in topic.partitions]  # fmt: skip
    try:
        results = await context.groups.delete_offsets(body.group_id, partitions)
    except Exception as error:  # every failure becomes the response's error code
        code, _ = error_of(error)
        return {"throttle_time": 0, "error_code": code, "topics": []}
    return {"throttle_time": 0, "error_code": ErrorCode.none, "topics": by_topic(results)}
