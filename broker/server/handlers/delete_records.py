"""DeleteRecords: move partitions' log start offsets forward."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of

HIGH_WATERMARK = -1


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    return {
        "throttle_time": 0,
        "topics": [
            {
                "name": topic.name,
                "partitions": [_delete(context, topic.name, item) for item in topic.partitions],
            }
            for topic in request.body.topics
        ],
    }


def _delete(context: BrokerContext, topic: str, item: Any) -> dict[str, Any]:
    try:
        partition = context.replicas.get(topic, item.partition_index)
        partition.check_leader()
        offset = partition.high_watermark if item.offset == HIGH_WATERMARK else item.offset
        partition.log.advance_log_start_offset(offset)
    except Exception as error:  # every failure becomes this partition's error code
        code, _ = error_of(error)
        return {"partition_index": item.partition_index, "low_watermark": -1, "error_code": code}
    return {
        "partition_index": item.partition_index,
        "low_watermark": partition.log.log_start_offset,
        "error_code": ErrorCode.none,
    }
