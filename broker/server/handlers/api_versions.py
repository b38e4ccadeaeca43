"""ApiVersions: the APIs and versions this broker speaks."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext


def api_versions_body(error: ErrorCode = ErrorCode.none) -> dict[str, Any]:
    from odradek.broker.server.handlers import API_HANDLERS  # the table imports this module

    return {
        "error_code": error,
        "api_keys": [
            {"api_key": key, "min_version": spec.min_version, "max_version": spec.max_version}
            for key, spec in sorted(API_HANDLERS.items())
        ],
        "throttle_time": 0,
    }


async def handle(context: BrokerContext, request: Request) -> dict[str, Any]:
    return api_versions_body()
