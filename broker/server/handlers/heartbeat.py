"""Heartbeat v0-4: keeps a member's session alive and tells it when to rejoin."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    try:
        context.groups.heartbeat(
            body.group_id,
            body.member_id,
            getattr(body, "group_instance_id", None),
            body.generation_id,
        )
        code = ErrorCode.none
    except Exception as error:  # every failure becomes the response's error code
        code, _ = error_of(error)
    return {"throttle_time": 0, "error_code": code}
