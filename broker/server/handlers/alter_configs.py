"""AlterConfigs: replace the whole config set of a topic, broker or group resource."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.framing import Request
from odradek.broker.security.acl_model import AclOperation
from odradek.broker.server.authorization import config_resource
from odradek.broker.server.config_alteration import replace_configs
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers.errors import awaited_answer_or_error


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    body = request.body
    return {
        "throttle_time": 0,
        "responses": [
            await _alter(context, request, item, body.validate_only) for item in body.resources
        ],
    }


async def _alter(
    context: BrokerContext, request: Request, resource: Any, validate_only: bool
) -> dict[str, Any]:
    kind, name = resource.resource_type, resource.resource_name

    async def answer() -> dict[str, Any]:
        context.authorization.check(
            request, AclOperation.ALTER_CONFIGS, *config_resource(kind, name)
        )
        configs = {entry.name: entry.value or "" for entry in resource.configs}
        await replace_configs(context, kind, name, configs, validate_only)
        return {}

    outcome = await awaited_answer_or_error(answer, {}, "error_message")
    return {"resource_type": kind, "resource_name": name, **outcome}
