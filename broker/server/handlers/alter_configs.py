"""AlterConfigs: replace the whole config set of a topic or broker resource."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.server.config_alteration import replace_configs
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import error_of


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    return {
        "throttle_time": 0,
        "responses": [await _alter(context, item, body.validate_only) for item in body.resources],
    }


async def _alter(context: BrokerContext, resource: Any, validate_only: bool) -> dict[str, Any]:
    result = {"resource_type": resource.resource_type, "resource_name": resource.resource_name}
    try:
        configs = {entry.name: entry.value or "" for entry in resource.configs}
        await replace_configs(
            context, resource.resource_type, resource.resource_name, configs, validate_only
        )
    except Exception as error:  # every failure becomes this resource's error code
        code, message = error_of(error)
        return {**result, "error_code": code, "error_message": message}
    return {**result, "error_code": ErrorCode.none, "error_message": None}
