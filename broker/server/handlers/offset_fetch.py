"""OffsetFetch v1-7: a group's committed offsets (v2+: null topics asks for all of them)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from odradek.broker.group.group import TopicPartition
from odradek.broker.group.record_format import CommittedOffset
from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of

NO_OFFSET = -1


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    requested = (
        [(topic.name, index) for topic in body.topics for index in topic.partition_indexes]
        if body.topics is not None
        else None
    )
    try:
        found = context.groups.fetch_offsets(body.group_id, requested)
    except Exception as error:  # every failure becomes the response's error code
        code, _ = error_of(error)
        # v1 has no top-level error: each partition carries it
        failed: dict[TopicPartition, CommittedOffset | None] = dict.fromkeys(requested or [])
        return {"throttle_time": 0, "error_code": code, "topics": _topics(failed, code)}
    return {"throttle_time": 0, "error_code": ErrorCode.none, "topics": _topics(found)}


def _topics(
    offsets: dict[TopicPartition, CommittedOffset | None], code: ErrorCode = ErrorCode.none
) -> list[dict[str, Any]]:
    topics: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (topic, partition), committed in offsets.items():
        topics[topic].append(
            {
                "partition_index": partition,
                "committed_offset": committed.offset if committed else NO_OFFSET,
                "committed_leader_epoch": committed.leader_epoch if committed else -1,
                "metadata": (committed.metadata or "") if committed else "",
                "error_code": code,
            }
        )
    return [{"name": name, "partitions": partitions} for name, partitions in topics.items()]
