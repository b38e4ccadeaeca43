"""LeaveGroup v0-5: one member (v0-2) or a batch of members (v3+) leave a group (v5: each
with its reason, logged)."""

from __future__ import annotations

import logging
from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of

log = logging.getLogger(__name__)

BATCH_VERSION = 3


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    batch = request.header.api_version >= BATCH_VERSION
    leaving: list[tuple[str, str | None]] = (
        [(item.member_id, item.group_instance_id) for item in body.members]
        if batch
        else [(body.member_id, None)]
    )
    for item in body.members if batch else ():
        if getattr(item, "reason", None):  # v5+ (KIP-800)
            log.info("%s leaves group %s: %s", item.member_id, body.group_id, item.reason)
    try:
        context.authorization.check(request, AclOperation.READ, ResourceType.GROUP, body.group_id)
        codes = context.groups.leave(body.group_id, leaving)
    except Exception as error:  # every failure becomes the response's error code
        code, _ = error_of(error)
        return {"throttle_time": 0, "error_code": code, "members": []}
    members = [
        {"member_id": member_id, "group_instance_id": instance, "error_code": member_code}
        for (member_id, instance), member_code in zip(leaving, codes, strict=True)
    ]
    # before v3 the one member's error is the response's
    top = ErrorCode.none if batch else codes[0]
    return {"throttle_time": 0, "error_code": top, "members": members}
