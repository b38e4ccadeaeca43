"""OffsetCommit v2-8: store a group's consumed positions (generation -1: standalone consumer)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from odradek.broker.group.coordinator import OffsetToCommit
from odradek.broker.group.group import TopicPartition
from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext

DEFAULT_RETENTION = -1


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    retention = getattr(body, "retention_time", None)
    retention_ms = (
        round(retention.total_seconds() * 1000) if retention is not None else DEFAULT_RETENTION
    )
    offsets = {
        (topic.name, item.partition_index): OffsetToCommit(
            item.committed_offset,
            getattr(item, "committed_leader_epoch", -1),
            item.committed_metadata,
            max(retention_ms, DEFAULT_RETENTION),
        )
        for topic in body.topics
        for item in topic.partitions
    }
    results = await context.groups.commit_offsets(
        body.group_id,
        body.generation_id_or_member_epoch,
        body.member_id,
        getattr(body, "group_instance_id", None),
        offsets,
    )
    return {"throttle_time": 0, "topics": by_topic(results)}


def by_topic(results: dict[TopicPartition, ErrorCode]) -> list[dict[str, Any]]:
    """Per-partition error codes grouped the way the response nests them."""
    topics: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (topic, partition), code in results.items():
        topics[topic].append({"partition_index": partition, "error_code": code})
    return [{"name": name, "partitions": partitions} for name, partitions in topics.items()]
