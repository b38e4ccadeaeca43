"""ListOffsets: earliest, latest, max-timestamp and by-timestamp offsets."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of

LATEST = -1
EARLIEST = -2
MAX_TIMESTAMP = -3


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    return {
        "throttle_time": 0,
        "topics": [
            {
                "name": topic.name,
                "partitions": [_lookup(context, topic.name, item) for item in topic.partitions],
            }
            for topic in request.body.topics
        ],
    }


def _lookup(context: BrokerContext, topic: str, item: Any) -> dict[str, Any]:
    try:
        partition = context.replicas.get(topic, item.partition_index)
        partition.check_leader(getattr(item, "current_leader_epoch", -1))
        log = partition.log
        timestamp, offset = -1, -1
        if item.timestamp == LATEST:
            offset = partition.high_watermark
        elif item.timestamp == EARLIEST:
            offset = log.log_start_offset
        elif item.timestamp == MAX_TIMESTAMP:
            timestamp, offset = log.max_timestamp()
        else:
            found = log.offset_for_timestamp(item.timestamp)
            if found is not None and found[0] < partition.high_watermark:
                offset, timestamp = found
    except Exception as error:  # every failure becomes this partition's error code
        code, _ = error_of(error)
        return {"partition_index": item.partition_index, "error_code": code,
                "timestamp": -1, "offset": -1, "leader_epoch": -1}  # fmt: skip
    return {
        "partition_index": item.partition_index,
        "error_code": ErrorCode.none,
        "timestamp": timestamp,
        "offset": offset,
        "leader_epoch": partition.state.leader_epoch,
    }
