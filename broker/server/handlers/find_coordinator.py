"""FindCoordinator v0-3: the broker leading the group's ``__consumer_offsets`` partition, or
the transactional id's ``__transaction_state`` one."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation, ResourceType
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import awaited_answer_or_error

GROUP_KEY_TYPE = 0
TRANSACTION_KEY_TYPE = 1
_KEY_RESOURCES = {
    GROUP_KEY_TYPE: ResourceType.GROUP,
    TRANSACTION_KEY_TYPE: ResourceType.TRANSACTIONAL_ID,
}


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    key_type = getattr(body, "key_type", GROUP_KEY_TYPE)

    async def answer() -> dict[str, Any]:
        if key_type in _KEY_RESOURCES:  # Kafka: DESCRIBE on the group or transactional id
            authorization = context.authorization
            authorization.check(request, AclOperation.DESCRIBE, _KEY_RESOURCES[key_type], body.key)
        if key_type == TRANSACTION_KEY_TYPE:
            broker = await context.transactions.find_coordinator(body.key)
        elif key_type == GROUP_KEY_TYPE:
            broker = await context.groups.find_coordinator(body.key)
        else:
            raise KafkaError(ErrorCode.invalid_request, f"unknown coordinator key type {key_type}")
        endpoint = broker.endpoint(request.listener_name)
        if endpoint is None:
            raise KafkaError(
                ErrorCode.coordinator_not_available,
                f"the coordinator has no listener {request.listener_name}",
            )
        return {"node_id": broker.node_id, "host": endpoint.host, "port": endpoint.port}

    failed = {"node_id": -1, "host": "", "port": -1}
    return {"throttle_time": 0, **await awaited_answer_or_error(answer, failed, "error_message")}
