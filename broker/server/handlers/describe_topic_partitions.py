"""DescribeTopicPartitions (KIP-966): topic layouts by name, paginated, what Kafka 3.8+
admin clients use for describeTopics.

Topics come sorted by name (all topics for an empty list), from the cursor on; a page
holds at most ``response_partition_limit`` partitions (capped by the broker's
``max.request.partition.size.limit``) and ``next_cursor`` says where the next begins.
Odradek has no eligible leader replicas (KIP-966's ELR), so those lists are empty.
"""

from __future__ import annotations

from typing import Any

from odradek.broker.cluster.metadata_image import MetadataImage, TopicMetadata
from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.metadata_partitions import partition_entries


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    image = context.store.image
    requested = [topic.name for topic in body.topics]
    cursor = body.cursor
    if cursor is not None and (
        cursor.partition_index < 0 or (requested and cursor.topic_name not in requested)
    ):
        invalid = [_error_entry(name, ErrorCode.invalid_request) for name in requested]
        return {"throttle_time": 0, "topics": invalid, "next_cursor": None}
    limit = max(
        min(
            context.config.get_int("max.request.partition.size.limit"),
            body.response_partition_limit,
        ),
        1,
    )
    # Kafka: DESCRIBE on each topic; all topics lists those allowed, a named one is refused
    authorization = context.authorization
    describable = authorization.allowed_names(
        request,
        AclOperation.DESCRIBE,
        ResourceType.TOPIC,
        set(requested) if requested else image.topics,
        log_denied=bool(requested),
    )
    names = sorted(set(requested) if requested else describable)
    if cursor is not None:
        names = [name for name in names if name >= cursor.topic_name]
    topics: list[dict[str, Any]] = []
    next_cursor = None
    for position, name in enumerate(names):
        topic = image.topics.get(name)
        if name not in describable:
            topics.append(_error_entry(name, ErrorCode.topic_authorization_failed))
            continue
        if topic is None:
            topics.append(_error_entry(name, ErrorCode.unknown_topic_or_partition))
            continue
        first = cursor.partition_index if cursor is not None and name == cursor.topic_name else 0
        entry = _topic_entry(topic, image)
        entry["topic_authorized_operations"] = authorization.authorized_operations(
            request, ResourceType.TOPIC, name
        )
        partitions = [
            {**p, "eligible_leader_replicas": (), "last_known_elr": ()}
            for p in entry["partitions"][first:]
        ]
        topics.append({**entry, "partitions": partitions[:limit]})
        if len(partitions) > limit:
            next_cursor = {"topic_name": name, "partition_index": first + limit}
            break
        limit -= len(partitions)
        if limit == 0 and position + 1 < len(names):
            next_cursor = {"topic_name": names[position + 1], "partition_index": 0}
            break
    return {"throttle_time": 0, "topics": topics, "next_cursor": next_cursor}


def _error_entry(name: str | None, code: ErrorCode) -> dict[str, Any]:
    """A topic's entry that carries only an error."""
    return {"error_code": code, "name": name, "topic_id": None, "is_internal": False,
            "partitions": []}  # fmt: skip


def _topic_entry(topic: TopicMetadata, image: MetadataImage) -> dict[str, Any]:
    """A topic's partitions as ``image`` has them."""
    return {
        "error_code": ErrorCode.none,
        "name": topic.name,
        "topic_id": topic.topic_id,
        "is_internal": topic.internal,
        "partitions": [
            {
                "error_code": entry.error_code,
                "partition_index": entry.index,
                "leader_id": entry.leader_id,
                "leader_epoch": entry.leader_epoch,
                "replica_nodes": entry.replicas,
                "isr_nodes": entry.isr,
                "offline_replicas": entry.offline_replicas,
            }
            for entry in partition_entries(topic, image)
        ],
    }
