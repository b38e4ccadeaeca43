"""OffsetForLeaderEpoch: the end offset of a leader epoch, for truncation."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import answer_or_error


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    topics = request.body.topics
    names = [topic.topic for topic in topics]
    # followers truncating need CLUSTER_ACTION; clients (since Kafka 2.3) DESCRIBE the topic
    authorization = context.authorization
    if authorization.authorize_cluster(request, AclOperation.CLUSTER_ACTION, log_denied=False):
        describable = set(names)
    else:
        describable = authorization.allowed_names(
            request, AclOperation.DESCRIBE, ResourceType.TOPIC, names
        )
    return {
        "throttle_time": 0,
        "topics": [
            {
                "topic": topic.topic,
                "partitions": [
                    _end_offset(context, topic.topic, item, topic.topic in describable)
                    for item in topic.partitions
                ],
            }
            for topic in topics
        ],
    }


def _end_offset(context: BrokerContext, topic: str, item: Any, describable: bool) -> dict[str, Any]:
    def answer() -> dict[str, Any]:
        if not describable:
            raise KafkaError(ErrorCode.topic_authorization_failed)
        partition = context.replicas.get(topic, item.partition)
        partition.check_leader(item.current_leader_epoch)
        epoch, end_offset = partition.end_offset_for_epoch(item.leader_epoch)
        return {"leader_epoch": epoch, "end_offset": end_offset}

    failed = {"leader_epoch": -1, "end_offset": -1}
    return {"partition": item.partition, **answer_or_error(answer, failed)}
