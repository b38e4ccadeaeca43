"""A small Kafka protocol client for broker-to-broker requests (replica fetches).

Requests are built from plain data with the protocol layer's entity builder and
encoded and decoded with kio, one request at a time per connection. The connection
speaks the inter-broker listener's protocol (``PeerSecurity``): TLS, then SaslHandshake
v1 and SaslAuthenticate v2 before the first request; when the other broker grants the
session a lifetime (``connections.max.reauth.ms``), the connection authenticates again
at 85 to 95% of it, as Kafka's clients do (KIP-368).
"""

from __future__ import annotations

import asyncio
import io
import logging
import random
import struct
import time
from collections.abc import Mapping
from typing import Any

from kio.serial import entity_writer

from odradek.broker.cluster.peer_security import PLAINTEXT, PeerSecurity
from odradek.broker.protocol.api_keys import ApiKey
from odradek.broker.protocol.body_decoding import decode_body
from odradek.broker.protocol.entity_builder import build_entity
from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import request_schema, response_schema

log = logging.getLogger(__name__)

_HEADER = struct.Struct(">hhi")
_SIZE = struct.Struct(">i")
_INT16 = struct.Struct(">h")
_CLIENT_ID = b"odradek-replica"
_CLIENT_ID_FIELD = _INT16.pack(len(_CLIENT_ID)) + _CLIENT_ID
SASL_HANDSHAKE_VERSION = 1
SASL_AUTHENTICATE_VERSION = 2


class PeerAuthenticationFailed(Exception):
    """The other broker refused this broker's login (its message, never a password)."""


# Kafka's client default of connections.max.idle.ms: below the brokers' 600000.
CLIENT_IDLE_S = 540.0


class PeerConnection:
    """One connection to another broker; ``request`` is not reentrant."""

    def __init__(
        self, host: str, port: int, timeout: float = 30.0, security: PeerSecurity = PLAINTEXT
    ) -> None:
        self.host = host
        self.port = port
        self._timeout = timeout
        self._security = security
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._correlation_id = 0
        self._reauthenticate_at: float | None = None  # monotonic seconds
        self._used_at = 0.0  # monotonic seconds

    async def request(self, api_key: int, version: int, body: Mapping[str, Any]) -> Any:
        """Send one request and return the decoded response body (kio entity)."""
        await self._connected()
        return await self._send(api_key, version, body)

    async def request_encoded(self, api_key: int, version: int, body: bytes) -> tuple[bytes, int]:
        """Send one request whose body is encoded already; the response frame and the
        offset its body starts at, for a hand-written decoder."""
        await self._connected()
        return await self._exchange(api_key, version, body)

    async def _connected(self) -> None:
        """Connect and log in if need be. A connection idle for CLIENT_IDLE_S is opened anew
        first: the other broker closes those idle for its connections.max.idle.ms (Kafka's
        clients do the same, a minute earlier)."""
        if time.monotonic() - self._used_at > CLIENT_IDLE_S:
            self.close()
        self._used_at = time.monotonic()
        if self._reader is None or self._writer is None:
            context = self._security.ssl_context()
            self._reader, self._writer = await asyncio.wait_for(
                asyncio.open_connection(
                    self.host,
                    self.port,
                    ssl=context,
                    server_hostname=self.host if context is not None else None,
                ),
                self._timeout,
            )
            await self._authenticate()
        elif self._reauthenticate_at is not None and time.monotonic() >= self._reauthenticate_at:
            await self._authenticate()

    async def _authenticate(self) -> None:
        """SaslHandshake and SaslAuthenticate until the exchange completes; nothing without
        SASL. PeerAuthenticationFailed when the other broker refuses."""
        try:
            await self._log_in()
        except BaseException:
            self.close()  # never serve requests on a connection that is not logged in
            raise

    async def _log_in(self) -> None:
        exchange = self._security.sasl_exchange()
        if exchange is None:
            return
        mechanism = exchange.mechanism
        handshake = await self._send(
            ApiKey.SASL_HANDSHAKE, SASL_HANDSHAKE_VERSION, {"mechanism": mechanism}
        )
        if handshake.error_code != ErrorCode.none:
            raise PeerAuthenticationFailed(
                f"broker at {self.host}:{self.port} does not offer {mechanism}"
                f" (it offers {', '.join(handshake.mechanisms) or 'nothing'})"
            )
        token: bytes | None = exchange.first()
        lifetime_ms = 0
        while token is not None:
            answer = await self._send(
                ApiKey.SASL_AUTHENTICATE, SASL_AUTHENTICATE_VERSION, {"auth_bytes": token}
            )
            if answer.error_code != ErrorCode.none:
                raise PeerAuthenticationFailed(
                    f"broker at {self.host}:{self.port} refused the {mechanism} login of"
                    f" {exchange.who}: {answer.error_message}"
                )
            lifetime_ms = int(answer.session_lifetime.total_seconds() * 1000)
            token = exchange.step(answer.auth_bytes)
        self._reauthenticate_at = (
            time.monotonic() + lifetime_ms / 1000 * random.uniform(0.85, 0.95)
            if lifetime_ms > 0
            else None
        )
        log.debug("logged in to %s:%d with %s", self.host, self.port, mechanism)

    async def _send(self, api_key: int, version: int, body: Mapping[str, Any]) -> Any:
        schema = request_schema(api_key, version)  # cached: kio looks it up by import
        encoded = io.BytesIO()
        entity_writer(schema)(encoded, build_entity(schema, body))
        payload, offset = await self._exchange(api_key, version, encoded.getvalue())
        return decode_body(response_schema(api_key, version), payload, offset)

    async def _exchange(self, api_key: int, version: int, body: bytes) -> tuple[bytes, int]:
        reader, writer = self._reader, self._writer
        assert reader is not None and writer is not None
        self._correlation_id += 1
        header = _HEADER.pack(api_key, version, self._correlation_id) + _CLIENT_ID_FIELD
        if request_schema(api_key, version).__header_schema__.__flexible__:
            header += b"\0"
        writer.write(_SIZE.pack(len(header) + len(body)) + header + body)
        await writer.drain()
        async with asyncio.timeout(self._timeout):
            (size,) = _SIZE.unpack(await reader.readexactly(4))
            payload = await reader.readexactly(size)
        flexible = response_schema(api_key, version).__header_schema__.__flexible__
        return payload, 4 + (1 if flexible else 0)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None
        self._reauthenticate_at = None
