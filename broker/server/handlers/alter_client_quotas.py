"""AlterClientQuotas v0-1 (KIP-546): set and remove client quotas, judged as Kafka's
controller judges them (``client_quota.plan_alterations``), stored in the coordination
store, where every broker's image picks them up."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation
from odradek.broker.security.client_quota import entity_of, plan_alterations
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.describe_client_quotas import entity_data


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    alterations = [
        (
            entity_of((item.entity_type, item.entity_name) for item in entry.entity),
            [(op.key, None if op.remove else float(op.value)) for op in entry.ops],
        )
        for entry in body.entries
    ]
    if not context.authorization.authorize_cluster(request, AclOperation.ALTER_CONFIGS):
        denied = ErrorCode.cluster_authorization_failed
        return {"throttle_time": 0, "entries": [
            {"error_code": denied, "error_message": None, "entity": entity_data(entity)}
            for entity, _ in alterations
        ]}  # fmt: skip
    while True:
        image = context.store.image
        results, changes = plan_alterations(image.client_quotas, alterations)
        if body.validate_only or not changes:
            break
        if await context.store.alter_client_quotas(changes, image):
            break
    entries = []
    for entity, error in results.items():
        entries.append(
            {
                "error_code": error.code if error is not None else ErrorCode.none,
                "error_message": error.message if error is not None else None,
                "entity": entity_data(entity),
            }
        )
    return {"throttle_time": 0, "entries": entries}
