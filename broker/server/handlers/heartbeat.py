"""Heartbeat v0-4: keeps a member's session alive and tells it when to rejoin."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import answer_or_error


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body

    def answer() -> dict[str, Any]:
        context.authorization.check(request, AclOperation.READ, ResourceType.GROUP, body.group_id)
        instance = getattr(body, "group_instance_id", None)
        context.groups.heartbeat(body.group_id, body.member_id, instance, body.generation_id)
        return {}

    return {"throttle_time": 0, **answer_or_error(answer, {})}
