"""OffsetCommit v2-10: store a group's consumed positions (generation -1: standalone consumer;
v10: topics named by id)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from odradek.broker.group.coordinator import OffsetToCommit
from odradek.broker.group.group import TopicPartition
from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext

DEFAULT_RETENTION = -1
TOPIC_IDS_FROM = 10


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    image = context.store.image
    retention = getattr(body, "retention_time", None)
    retention_ms = (
        round(retention.total_seconds() * 1000) if retention is not None else DEFAULT_RETENTION
    )
    by_id = request.header.api_version >= TOPIC_IDS_FROM
    offsets: dict[TopicPartition, OffsetToCommit] = {}
    refused: list[dict[str, Any]] = []
    names = [image.topic_name(topic.topic_id) if by_id else topic.name for topic in body.topics]
    # Kafka: READ on the group for the whole request, then READ on each topic
    authorization = context.authorization
    if not authorization.authorize(request, AclOperation.READ, ResourceType.GROUP, body.group_id):
        readable: set[str] = set()
        denied = ErrorCode.group_authorization_failed
    else:
        readable = authorization.allowed_names(
            request, AclOperation.READ, ResourceType.TOPIC, names
        )
        denied = ErrorCode.topic_authorization_failed
    for topic, name in zip(body.topics, names, strict=True):
        if name is None or name not in readable:  # an unknown id (v10), or not allowed
            code = ErrorCode.unknown_topic_id if name is None else denied
            codes = {item.partition_index: code for item in topic.partitions}
            topic_id = getattr(topic, "topic_id", None)  # v10+
            failed_topic = {"name": name or "", "topic_id": topic_id, **_partitions(codes)}
            refused.append(failed_topic)
            continue
        for item in topic.partitions:
            offsets[(name, item.partition_index)] = OffsetToCommit(
                item.committed_offset,
                getattr(item, "committed_leader_epoch", -1),
                item.committed_metadata,
                max(retention_ms, DEFAULT_RETENTION),
            )
    results = (
        await context.groups.commit_offsets(
            body.group_id,
            body.generation_id_or_member_epoch,
            body.member_id,
            getattr(body, "group_instance_id", None),
            offsets,
        )
        if denied is not ErrorCode.group_authorization_failed
        else {}
    )
    answered = by_topic(results)
    for topic in answered:
        metadata = image.topics.get(topic["name"])
        topic["topic_id"] = metadata.topic_id if metadata is not None else None
    return {"throttle_time": 0, "topics": answered + refused}


def by_topic(results: dict[TopicPartition, ErrorCode]) -> list[dict[str, Any]]:
    """Per-partition error codes grouped the way the response nests them."""
    topics: dict[str, dict[int, ErrorCode]] = defaultdict(dict)
    for (topic, partition), code in results.items():
        topics[topic][partition] = code
    return [{"name": name, **_partitions(codes)} for name, codes in topics.items()]


def _partitions(codes: dict[int, ErrorCode]) -> dict[str, Any]:
    return {"partitions": [{"partition_index": p, "error_code": c} for p, c in codes.items()]}
