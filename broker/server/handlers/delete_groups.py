"""DeleteGroups v0-2: remove empty groups and their committed offsets."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    results = []
    for group_id in request.body.groups_names:
        try:
            await context.groups.delete_group(group_id)
            code = ErrorCode.none
        except Exception as error:  # every failure becomes this group's error code
            code, _ = error_of(error)
        results.append({"group_id": group_id, "error_code": code})
    return {"throttle_time": 0, "results": results}
