"""FindCoordinator v0-5: the broker leading the group's ``__consumer_offsets`` partition, or
the transactional id's ``__transaction_state`` one; from v4 for several keys at once
(KIP-699), each with its own error."""

from __future__ import annotations

import functools
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


BATCHED_FROM = 4  # KIP-699: several keys of one type, an answer each


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    key_type = getattr(body, "key_type", GROUP_KEY_TYPE)
    failed = {"node_id": -1, "host": "", "port": -1}
    if request.header.api_version >= BATCHED_FROM:
        coordinators = []
        for key in body.coordinator_keys:
            found = await awaited_answer_or_error(
                functools.partial(_coordinator, context, request, key_type, key),
                failed,
                "error_message",
            )
            coordinators.append({"key": key, **found})
        return {"throttle_time": 0, "coordinators": coordinators}
    found = await awaited_answer_or_error(
        functools.partial(_coordinator, context, request, key_type, body.key),
        failed,
        "error_message",
    )
    return {"throttle_time": 0, **found}


async def _coordinator(
    context: BrokerContext, request: Request, key_type: int, key: str
) -> dict[str, Any]:
    """The coordinator of one key, or a KafkaError saying why not."""
    if key_type in _KEY_RESOURCES:  # Kafka: DESCRIBE on the group or transactional id
        authorization = context.authorization
        authorization.check(request, AclOperation.DESCRIBE, _KEY_RESOURCES[key_type], key)
    if key_type == TRANSACTION_KEY_TYPE:
        broker = await context.transactions.find_coordinator(key)
    elif key_type == GROUP_KEY_TYPE:
        broker = await context.groups.find_coordinator(key)
    else:
        raise KafkaError(ErrorCode.invalid_request, f"unknown coordinator key type {key_type}")
    endpoint = broker.endpoint(request.listener_name)
    if endpoint is None:
        raise KafkaError(
            ErrorCode.coordinator_not_available,
            f"the coordinator has no listener {request.listener_name}",
        )
    return {"node_id": broker.node_id, "host": endpoint.host, "port": endpoint.port}
