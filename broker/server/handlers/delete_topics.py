"""DeleteTopics: by name (v1-v5) or name/id pairs (v6)."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import awaited_answer_or_error
from odradek.broker.server.topic_admin import delete_topic


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    if request.header.api_version >= 6:
        targets = [(item.name, item.topic_id) for item in body.topics]
    else:
        targets = [(name, None) for name in body.topic_names]
    return {
        "throttle_time": 0,
        "responses": [
            await _delete(context, request, name, topic_id) for name, topic_id in targets
        ],
    }


async def _delete(
    context: BrokerContext, request: Request, name: str | None, topic_id: Any
) -> dict[str, Any]:
    image = context.store.image
    by_id = name is None
    if name is None:
        name = image.topic_name(topic_id)
    found = image.topics.get(name) if name is not None else None
    # Kafka: DELETE on the cluster or on the topic; without DESCRIBE the topic's existence
    # (or, named by id, its name) is not revealed
    authorization = context.authorization
    deletable = describable = name is None or authorization.authorize_cluster(
        request, AclOperation.DELETE, log_denied=False
    )
    if not deletable and name is not None:
        deletable = authorization.authorize(request, AclOperation.DELETE, ResourceType.TOPIC, name)
        describable = deletable or authorization.authorize(
            request, AclOperation.DESCRIBE, ResourceType.TOPIC, name, log_denied=False
        )
    if not describable and by_id:
        name = None

    async def answer() -> dict[str, Any]:
        if not describable or (found is not None and not deletable):
            raise KafkaError(ErrorCode.topic_authorization_failed)
        if found is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, "no such topic")
        await delete_topic(context, found.name)
        return {"topic_id": found.topic_id}

    outcome = await awaited_answer_or_error(answer, {"topic_id": topic_id}, "error_message")
    return {"name": name, **outcome}
