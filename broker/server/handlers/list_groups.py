"""ListGroups v0-5: the groups this broker coordinates, filtered by state (v4) and by
type (v5: every group here is a classic one)."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of

CLASSIC = "classic"


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    types = {t.lower() for t in getattr(request.body, "types_filter", ())}
    try:
        groups = context.groups.list_groups(getattr(request.body, "states_filter", ()))
    except Exception as error:  # every failure becomes the response's error code
        code, _ = error_of(error)
        return {"throttle_time": 0, "error_code": code, "groups": []}
    return {
        "throttle_time": 0,
        "error_code": ErrorCode.none,
        "groups": [
            {
                "group_id": group.group_id,
                "protocol_type": group.protocol_type or "",
                "group_state": group.state.value,
                "group_type": CLASSIC,
            }
            for group in groups
            if not types or CLASSIC in types
        ],
    }
