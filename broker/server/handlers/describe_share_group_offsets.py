"""DescribeShareGroupOffsets v0-1: each share-partition's start offset (every record below
it is done with) and leader epoch, from the share coordinator, and (v1, KIP-1226) its lag:
the records below the high watermark still to be delivered or acknowledged. With no topics
named, every share-partition of the group; a partition whose state was never written
answers -1."""

from __future__ import annotations

from typing import Any

from odradek.broker.group.share_group import InitializedTopics
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import awaited_answer_or_error
from odradek.broker.server.handlers.share_group_offsets import readable_topics, topic_id_of
from odradek.broker.share.share_state import SharePartitionKey

UNKNOWN = {"start_offset": -1, "leader_epoch": -1, "lag": -1}


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    groups = []
    for asked in request.body.groups:

        async def answer(asked: Any = asked) -> dict[str, Any]:
            group_id = asked.group_id
            context.authorization.check(
                request, AclOperation.DESCRIBE, ResourceType.GROUP, group_id
            )
            known = context.groups.share_partitions(group_id)
            wanted = known if asked.topics is None else _named(context, asked.topics)
            readable = readable_topics(context, request, (name for name, _ in wanted.values()))
            topics = []
            for topic_id, (name, partitions) in sorted(wanted.items(), key=lambda i: i[1][0]):
                described = []
                for index in sorted(partitions):
                    key = SharePartitionKey(group_id, topic_id, index)

                    async def offsets(
                        key: SharePartitionKey = key, name: str = name
                    ) -> dict[str, Any]:
                        if name not in readable:
                            raise KafkaError(ErrorCode.topic_authorization_failed)
                        state = await context.shares.persister.read(key, -1)
                        if state is None:
                            return UNKNOWN
                        ends = context.shares.partition_ends
                        end = await ends.high_watermark(name, key.partition)
                        return {
                            "start_offset": state.start_offset,
                            "leader_epoch": state.leader_epoch,
                            "lag": -1 if end is None else state.lag(end),
                        }

                    result = await awaited_answer_or_error(offsets, UNKNOWN, "error_message")
                    described.append({"partition_index": index, **result})
                topics.append({"topic_name": name, "topic_id": topic_id, "partitions": described})
            return {"topics": topics}

        result = await awaited_answer_or_error(answer, {"topics": []}, "error_message")
        groups.append({"group_id": asked.group_id, **result})
    return {"throttle_time": 0, "groups": groups}


def _named(context: BrokerContext, topics: Any) -> InitializedTopics:
    """The topics and partitions a request names (unknown topics: UNKNOWN_TOPIC_OR_PARTITION
    for the whole group, as the partitions cannot be named by id)."""
    return {
        topic_id_of(context, topic.topic_name): (topic.topic_name, frozenset(topic.partitions))
        for topic in topics
    }
