"""CreatePartitions: grow a topic's partition count."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import awaited_answer_or_error
from odradek.broker.server.topic_admin import add_partitions


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    alterable = context.authorization.allowed_names(
        request, AclOperation.ALTER, ResourceType.TOPIC, (topic.name for topic in body.topics)
    )
    return {
        "throttle_time": 0,
        "results": [
            await _grow(
                context,
                topic,
                body.validate_only,
                topic.name in alterable,
                body.timeout.total_seconds(),
            )
            for topic in body.topics
        ],
    }


async def _grow(
    context: BrokerContext, topic: Any, validate_only: bool, alterable: bool, timeout_s: float
) -> dict[str, Any]:
    async def answer() -> dict[str, Any]:
        if not alterable:
            raise KafkaError(
                ErrorCode.topic_authorization_failed, "The topic authorization is failed."
            )
        assignments = [entry.broker_ids for entry in topic.assignments or ()]
        await add_partitions(
            context, topic.name, topic.count, assignments, validate_only, settle_s=timeout_s
        )
        return {}

    return {"name": topic.name, **await awaited_answer_or_error(answer, {}, "error_message")}
