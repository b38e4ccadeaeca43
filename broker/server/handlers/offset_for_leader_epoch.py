"""OffsetForLeaderEpoch: the end offset of a leader epoch, for truncation."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    return {
        "throttle_time": 0,
        "topics": [
            {
                "topic": topic.topic,
                "partitions": [
                    _end_offset(context, topic.topic, item) for item in topic.partitions
                ],
            }
            for topic in request.body.topics
        ],
    }


def _end_offset(context: BrokerContext, topic: str, item: Any) -> dict[str, Any]:
    try:
        partition = context.replicas.get(topic, item.partition)
        partition.check_leader(item.current_leader_epoch)
        epoch, end_offset = partition.log.end_offset_for_epoch(item.leader_epoch)
    except Exception as error:  # every failure becomes this partition's error code
        code, _ = error_of(error)
        return {"error_code": code, "partition": item.partition, "leader_epoch": -1,
                "end_offset": -1}  # fmt: skip
    return {"error_code": ErrorCode.none, "partition": item.partition, "leader_epoch": epoch,
            "end_offset": end_offset}  # fmt: skip
