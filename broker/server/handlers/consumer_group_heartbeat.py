"""ConsumerGroupHeartbeat v0-1 (KIP-848): join, stay in, and leave a consumer group whose
assignment the coordinator computes; v1 members choose their own member id."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from odradek.broker.group.consumer_heartbeat import HeartbeatRequest, HeartbeatResult
from odradek.broker.group.share_heartbeat import ShareHeartbeatResult
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import awaited_answer_or_error

FAILED = {"member_id": None, "member_epoch": -1, "heartbeat_interval": 0, "assignment": None}


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body

    async def answer() -> dict[str, Any]:
        context.authorization.check(request, AclOperation.READ, ResourceType.GROUP, body.group_id)
        owned = body.topic_partitions
        timeout = body.rebalance_timeout
        result = await context.groups.consumer_heartbeat(
            body.group_id,
            HeartbeatRequest(
                member_id=body.member_id,
                member_epoch=body.member_epoch,
                client_id=request.header.client_id or "",
                client_host=request.client_host,
                instance_id=body.instance_id,
                rack_id=body.rack_id,
                rebalance_timeout_ms=round(timeout.total_seconds() * 1000),
                subscribed_topic_names=body.subscribed_topic_names,
                subscribed_topic_regex=getattr(body, "subscribed_topic_regex", None),
                server_assignor=body.server_assignor,
                owned=None
                if owned is None
                else {item.topic_id: tuple(item.partitions) for item in owned},
            ),
            request.header.api_version,
        )
        return heartbeat_answer(result)

    return {"throttle_time": 0, **await awaited_answer_or_error(answer, FAILED, "error_message")}


def heartbeat_answer(result: HeartbeatResult | ShareHeartbeatResult) -> dict[str, Any]:
    """The answer of a consumer or share group heartbeat: the member's id, epoch, heartbeat
    interval and, when it changed, its assignment."""
    return {
        "member_id": result.member_id,
        "member_epoch": result.member_epoch,
        "heartbeat_interval": result.heartbeat_interval_ms,
        "assignment": None
        if result.assignment is None
        else {"topic_partitions": _topic_partitions(result.assignment)},
    }


def _topic_partitions(assignment: Mapping[Any, frozenset[int]]) -> list[dict[str, Any]]:
    return [
        {"topic_id": topic_id, "partitions": sorted(partitions)}
        for topic_id, partitions in assignment.items()
    ]
