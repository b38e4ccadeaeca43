"""AlterShareGroupOffsets v0: start share-partitions of an empty share group (created if
missing, as in Kafka) afresh at the given offsets: the share coordinator initializes each
state in a new state epoch, so a partition leader still holding the old one is fenced at
its next write and reloads. A group with members: NON_EMPTY_GROUP."""

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

    async def alter(share_partitions: InitializedTopics) -> list[dict[str, Any]]:
        responses = []
        for topic in body.topics:
            partitions = []
            for item in topic.partitions:

                async def initialize(topic: Any = topic, item: Any = item) -> dict[str, Any]:
                    name, index = topic.topic_name, item.partition_index
                    if name not in readable:
                        raise KafkaError(ErrorCode.topic_authorization_failed)
                    topic_id = topic_id_of(context, name)
                    if not 0 <= index < len(context.store.image.topics[name].partitions):
                        raise KafkaError(ErrorCode.unknown_topic_or_partition)
                    key = SharePartitionKey(body.group_id, topic_id, index)
                    await context.shares.persister.initialize(key, item.start_offset)
                    _, known = share_partitions.get(topic_id, (name, frozenset()))
                    share_partitions[topic_id] = (name, known | {index})
                    return {}

                result = await awaited_answer_or_error(initialize, {}, "error_message")
                partitions.append({"partition_index": item.partition_index, **result})
            topic_id = topic_id_or_zero(context, topic.topic_name)
            responses.append(
                {"topic_name": topic.topic_name, "topic_id": topic_id, "partitions": partitions}
            )
        return responses

    return await change_share_offsets(context, request, AclOperation.READ, True, alter)
