"""OffsetDelete v0: drop a group's committed offsets of topics it no longer consumes."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import awaited_answer_or_error
from odradek.broker.server.handlers.offset_commit import by_topic


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    authorization = context.authorization
    readable = authorization.allowed_names(
        request, AclOperation.READ, ResourceType.TOPIC, (topic.name for topic in body.topics)
    )
    partitions = [(topic.name, item.partition_index) for topic in body.topics
                  if topic.name in readable for item in topic.partitions]  # fmt: skip
    # Kafka: DELETE on the group, then READ on each topic
    unreadable = {(topic.name, item.partition_index): ErrorCode.topic_authorization_failed
                  for topic in body.topics if topic.name not in readable
                  for item in topic.partitions}  # fmt: skip

    async def answer() -> dict[str, Any]:
        authorization.check(request, AclOperation.DELETE, ResourceType.GROUP, body.group_id)
        deleted = await context.groups.delete_offsets(body.group_id, partitions)
        return {"topics": by_topic({**deleted, **unreadable})}

    return {"throttle_time": 0, **await awaited_answer_or_error(answer, {"topics": []})}
