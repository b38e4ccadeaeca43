"""CreatePartitions: grow a topic's partition count."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import awaited_answer_or_error
from odradek.broker.server.topic_admin import add_partitions


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    return {
        "throttle_time": 0,
        "results": [await _grow(context, topic, body.validate_only) for topic in body.topics],
    }


async def _grow(context: BrokerContext, topic: Any, validate_only: bool) -> dict[str, Any]:
    async def answer() -> dict[str, Any]:
        assignments = [entry.broker_ids for entry in topic.assignments or ()]
        await add_partitions(context, topic.name, topic.count, assignments, validate_only)
        return {}

    return {"name": topic.name, **await awaited_answer_or_error(answer, {}, "error_message")}
