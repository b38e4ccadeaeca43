"""JoinGroup v0-9: become a member; answered when the rebalance completes. The leader is
never told to skip the assignment (v9, KIP-814): it always runs it."""

from __future__ import annotations

import logging
from typing import Any

from odradek.broker.group.rebalance import JoinRequest
from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext

log = logging.getLogger(__name__)

MEMBER_ID_REQUIRED_VERSION = 4  # KIP-394: new members first get an id, then join with it


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    if not context.authorization.authorize(
        request, AclOperation.READ, ResourceType.GROUP, body.group_id
    ):
        return {
            "throttle_time": 0,
            "error_code": ErrorCode.group_authorization_failed,
            "generation_id": -1,
            "protocol_name": "" if request.header.api_version < 7 else None,
            "leader": "",
            "member_id": "",
            "members": [],
        }
    reason = getattr(body, "reason", None)  # v8+ (KIP-800)
    if reason:
        log.info("%s joins group %s: %s", body.member_id or "a new member", body.group_id, reason)
    session_ms = _ms(body.session_timeout)
    join = JoinRequest(
        member_id=body.member_id,
        group_instance_id=getattr(body, "group_instance_id", None),
        client_id=request.header.client_id or "",
        client_host=request.client_host,
        session_timeout_ms=session_ms,
        # v0 has no rebalance timeout: the session timeout bounded rebalances then
        rebalance_timeout_ms=_ms(getattr(body, "rebalance_timeout", body.session_timeout)),
        protocol_type=body.protocol_type,
        protocols=tuple((p.name, p.metadata) for p in body.protocols),
        require_known_member_id=request.header.api_version >= MEMBER_ID_REQUIRED_VERSION,
    )
    context.requests.leave(request.connection_id)  # it may wait for the whole rebalance
    result = await context.groups.join(body.group_id, join)
    return {
        "throttle_time": 0,
        "error_code": result.error,
        "generation_id": result.generation,
        "protocol_type": result.protocol_type,
        # nullable only from v7; older versions send "" when no protocol was chosen
        "protocol_name": result.protocol_name or ("" if request.header.api_version < 7 else None),
        "leader": result.leader_id,
        "skip_assignment": False,
        "member_id": result.member_id,
        "members": [
            {
                "member_id": member.member_id,
                "group_instance_id": member.group_instance_id,
                "metadata": member.metadata,
            }
            for member in result.members
        ],
    }


def _ms(value: Any) -> int:
    """kio gives i32 durations as timedeltas."""
    milliseconds: int = round(value.total_seconds() * 1000)
    return milliseconds
