"""DeleteShareGroupOffsets v0: forget the share-partitions of whole topics of an empty
share group (their state is deleted at the share coordinator; the group starts them
afresh by ``share.auto.offset.reset`` if they are assigned again). A group with members:
NON_EMPTY_GROUP."""

from __future__ import annotations

from typing import Any

from odradek.broker.group.share_group import InitializedTopics
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import awaited_answer_or_error
from odradek.broker.server.handlers.share_group_offsets import (
    change_share_offsets,
    readable_topics,
    topic_id_of,
    topic_id_or_zero,
)
from odradek.broker.share.share_state import SharePartitionKey


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    readable = readable_topics(context, request, (topic.topic_name for topic in body.topics))

    async def delete(share_partitions: InitializedTopics) -> list[dict[str, Any]]:
        responses = []
        for topic in body.topics:

            async def forget(name: str = topic.topic_name) -> dict[str, Any]:
                if name not in readable:
                    raise KafkaError(ErrorCode.topic_authorization_failed)
                topic_id = topic_id_of(context, name)
                _, partitions = share_partitions.pop(topic_id, (name, frozenset()))
                for index in sorted(partitions):
                    key = SharePartitionKey(body.group_id, topic_id, index)
                    await context.shares.persister.delete(key)
                return {"topic_id": topic_id}

            failed = {"topic_id": topic_id_or_zero(context, topic.topic_name)}
            result = await awaited_answer_or_error(forget, failed, "error_message")
            responses.append({"topic_name": topic.topic_name, **result})
        return responses

    return await change_share_offsets(context, request, AclOperation.DELETE, False, delete)
