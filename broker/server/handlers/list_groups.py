"""ListGroups v0-5: the groups this broker coordinates, filtered by state (v4) and by
type (v5: ``classic``, ``consumer`` for the KIP-848 groups or ``share`` for KIP-932's)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from odradek.broker.group.group import Group
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import answer_or_error


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    types = {t.lower() for t in getattr(request.body, "types_filter", ())}

    def answer() -> dict[str, Any]:
        groups = context.groups.list_groups(getattr(request.body, "states_filter", ()))
        # Kafka: DESCRIBE on the cluster lists every group, else those the sender may DESCRIBE
        authorization = context.authorization
        if not authorization.authorize_cluster(request, AclOperation.DESCRIBE, log_denied=False):
            groups = authorization.filter(
                request,
                AclOperation.DESCRIBE,
                ResourceType.GROUP,
                groups,
                lambda group: group.group_id,
                log_denied=False,
            )
        return {"groups": _listed(groups, types)}

    return {"throttle_time": 0, **answer_or_error(answer, {"groups": []})}


def _listed(groups: Iterable[Group], types: set[str]) -> list[dict[str, Any]]:
    return [
        {
            "group_id": group.group_id,
            "protocol_type": group.listed_protocol_type,
            "group_state": group.state_name,
            "group_type": group.group_type,
        }
        for group in groups
        if not types or group.group_type in types
    ]
