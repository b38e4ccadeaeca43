"""AlterPartitionReassignments: start or cancel moving partitions between brokers."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of
from odradek.broker.server.partition_admin import reassign


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    responses = []
    for topic in request.body.topics:
        results = []
        for item in topic.partitions:
            try:
                await reassign(context, topic.name, item.partition_index, item.replicas)
                results.append({"partition_index": item.partition_index,
                                "error_code": ErrorCode.none, "error_message": None})  # fmt: skip
            except Exception as error:  # every failure becomes this partition's error code
                code, message = error_of(error)
                results.append({"partition_index": item.partition_index, "error_code": code,
                                "error_message": message})  # fmt: skip
        responses.append({"name": topic.name, "partitions": results})
    return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None,
            "responses": responses}  # fmt: skip
