"""AlterPartitionReassignments: start or cancel moving partitions between brokers."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import awaited_answer_or_error
from odradek.broker.server.partition_admin import reassign


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    responses = []
    if not context.authorization.authorize_cluster(request, AclOperation.ALTER):
        denied = {"error_code": ErrorCode.cluster_authorization_failed, "error_message": None}
        responses = [
            {"name": topic.name,
             "partitions": [{"partition_index": p.partition_index, **denied}
                            for p in topic.partitions]}
            for topic in request.body.topics
        ]  # fmt: skip
        return {"throttle_time": 0, **denied, "responses": responses}
    for topic in request.body.topics:
        results = []
        for item in topic.partitions:

            async def answer(name: str = topic.name, item: Any = item) -> dict[str, Any]:
                await reassign(context, name, item.partition_index, item.replicas)
                return {}

            moved = await awaited_answer_or_error(answer, {}, "error_message")
            results.append({"partition_index": item.partition_index, **moved})
        responses.append({"name": topic.name, "partitions": results})
    return {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None,
            "responses": responses}  # fmt: skip
