"""SyncGroup v0-5: the leader hands in the assignment; every member gets its own."""

from __future__ import annotations

from typing import Any

from odradek.broker.group.rebalance import SyncRequest
from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    if not context.authorization.authorize(
        request, AclOperation.READ, ResourceType.GROUP, body.group_id
    ):
        return {
            "throttle_time": 0,
            "error_code": ErrorCode.group_authorization_failed,
            "protocol_type": None,
            "protocol_name": None,
            "assignment": b"",
        }
    sync = SyncRequest(
        member_id=body.member_id,
        group_instance_id=getattr(body, "group_instance_id", None),
        generation=body.generation_id,
        protocol_type=getattr(body, "protocol_type", None),
        protocol_name=getattr(body, "protocol_name", None),
        assignments={item.member_id: item.assignment for item in body.assignments},
    )
    context.requests.leave(request.connection_id)  # a follower waits for the leader's sync
    result = await context.groups.sync(body.group_id, sync)
    return {
        "throttle_time": 0,
        "error_code": result.error,
        "protocol_type": result.protocol_type,
        "protocol_name": result.protocol_name,
        "assignment": result.assignment,
    }
