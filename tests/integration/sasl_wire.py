"""SASL on the wire, for tests that judge the broker's answers themselves: SaslHandshake,
SaslAuthenticate and whether the broker closed the connection."""

from __future__ import annotations

from typing import Any

from kafka_wire import WireClient, load_request_schema, recv_frame

SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36
UNSUPPORTED_SASL_MECHANISM, ILLEGAL_SASL_STATE, SASL_AUTHENTICATION_FAILED = 33, 34, 58


def handshake(wire: WireClient, mechanism: str) -> Any:
    schema = load_request_schema(SASL_HANDSHAKE, 1)
    return wire.call(SASL_HANDSHAKE, 1, schema(mechanism=mechanism))


def authenticate(wire: WireClient, token: bytes, version: int = 2) -> Any:
    schema = load_request_schema(SASL_AUTHENTICATE, version)
    return wire.call(SASL_AUTHENTICATE, version, schema(auth_bytes=token))


def plain_token(user: str, password: str) -> bytes:
    return f"\0{user}\0{password}".encode()


def oauthbearer_token(jwt: str) -> bytes:
    return f"n,,\x01auth=Bearer {jwt}\x01\x01".encode()


def closed(wire: WireClient) -> bool:
    """Whether the broker closed the connection (reads until it does, or answers)."""
    try:
        recv_frame(wire.sock)
    except (ConnectionError, OSError, AssertionError, EOFError):
        return True
    return False
