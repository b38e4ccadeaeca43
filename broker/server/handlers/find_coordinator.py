"""FindCoordinator v0-3: the broker leading the group's ``__consumer_offsets`` partition."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of

GROUP_KEY_TYPE = 0
TRANSACTION_KEY_TYPE = 1


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    key_type = getattr(body, "key_type", GROUP_KEY_TYPE)
    try:
        if key_type == TRANSACTION_KEY_TYPE:
            raise KafkaError(ErrorCode.coordinator_not_available, "transactions are not served yet")
        if key_type != GROUP_KEY_TYPE:
            raise KafkaError(ErrorCode.invalid_request, f"unknown coordinator key type {key_type}")
        broker = await context.groups.find_coordinator(body.key)
    except Exception as error:  # every failure becomes the response's error code
        code, message = error_of(error)
        return {"throttle_time": 0, "error_code": code, "error_message": message,
                "node_id": -1, "host": "", "port": -1}  # fmt: skip
    return {
        "throttle_time": 0,
        "error_code": ErrorCode.none,
        "error_message": None,
        "node_id": broker.node_id,
        "host": broker.host,
        "port": broker.port,
    }
