"""DeleteGroups v0-2: remove empty groups and their committed offsets (a share group's
share-partition states too, at their share coordinators)."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import awaited_answer_or_error
from odradek.broker.share.share_state import SharePartitionKey


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    results = []
    for group_id in request.body.groups_names:

        async def answer(group_id: str = group_id) -> dict[str, Any]:
            context.authorization.check(request, AclOperation.DELETE, ResourceType.GROUP, group_id)
            shared = context.groups.share_partitions_if_share_group(group_id)
            await context.groups.delete_group(group_id)
            for topic_id, (_, partitions) in shared.items():  # a share group's state goes too
                for index in sorted(partitions):
                    key = SharePartitionKey(group_id, topic_id, index)
                    await context.shares.persister.delete(key)
            return {}

        results.append({"group_id": group_id, **await awaited_answer_or_error(answer, {})})
    return {"throttle_time": 0, "results": results}
