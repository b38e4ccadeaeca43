"""SaslHandshake and SaslAuthenticate reaching the request handlers: the connection serves
them itself on SASL listeners (``sasl_authenticator``), so here they are out of place, on
a listener without SASL or after authentication, and answered ILLEGAL_SASL_STATE as Kafka
answers them."""

from __future__ import annotations

from typing import Any

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import Request
from odradek.broker.server.context import BrokerContext


async def handle_handshake(context: BrokerContext, request: Request) -> dict[str, Any]:
    return {"error_code": ErrorCode.illegal_sasl_state, "mechanisms": []}


async def handle_authenticate(context: BrokerContext, request: Request) -> dict[str, Any]:
    return {
        "error_code": ErrorCode.illegal_sasl_state,
        "error_message": f"SaslAuthenticate is not expected on listener {request.listener_name}",
        "auth_bytes": b"",
        "session_lifetime": 0,
    }
