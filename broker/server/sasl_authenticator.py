"""The SASL side of one connection on a SASL listener, as Kafka's SaslServerAuthenticator:
before authentication only ApiVersions, SaslHandshake and SaslAuthenticate are served
(after a v0 handshake the tokens come bare, framed by their size only); a failed
authentication is answered and then closes the connection; a session
lives ``session_lifetime_ms`` (KIP-368), within which the client re-authenticates as the
same principal, and after which any other request closes the connection."""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from prometheus_client import Counter

from odradek.broker.protocol.api_keys import ApiKey
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.security.sasl_mechanism import (
    AuthenticationFailed,
    SaslServerExchange,
    session_lifetime_ms,
)
from odradek.broker.security.sasl_server_factory import SaslServerMechanisms

log = logging.getLogger(__name__)

ALWAYS_SERVED = frozenset({ApiKey.API_VERSIONS, ApiKey.SASL_HANDSHAKE, ApiKey.SASL_AUTHENTICATE})


class SaslAuthenticator:
    def __init__(
        self,
        mechanisms: SaslServerMechanisms,
        listener: str,
        max_reauth_ms: int,
        max_token_bytes: int,
        authentications: Counter,
        peer: object,
    ) -> None:
        self._mechanisms = mechanisms
        self._listener = listener
        self._max_reauth_ms = max_reauth_ms
        self.max_token_bytes = max_token_bytes
        self._authentications = authentications
        self._peer = peer
        self.principal: str | None = None
        self._exchange: SaslServerExchange | None = None
        self._expires_at: float | None = None  # monotonic seconds
        self._raw_tokens = False

    def serves(self, api_key: int) -> bool:
        """Whether a request may be served now; False: the connection must close."""
        if api_key in ALWAYS_SERVED:
            return True
        expired = self._expires_at is not None and time.monotonic() >= self._expires_at
        return self.principal is not None and not expired

    @property
    def expects_raw_token(self) -> bool:
        """After SaslHandshake v0 the client sends bare tokens, not SaslAuthenticate."""
        return self._raw_tokens and self._exchange is not None and not self._exchange.complete

    def handshake(self, mechanism: str, version: int) -> tuple[dict[str, Any], bool]:
        """SaslHandshake: the response, and whether the connection closes after it."""
        self._raw_tokens = version == 0
        offered = list(self._mechanisms.names)
        if self._exchange is not None and not self._exchange.complete:
            return {"error_code": ErrorCode.illegal_sasl_state, "mechanisms": offered}, True
        try:
            self._exchange = self._mechanisms.new_exchange(
                mechanism, reauthentication=self.principal is not None
            )
        except KafkaError as error:
            self._count(mechanism, "failure")
            log.info(
                "%s asked for SASL mechanism %r, not offered on %s",
                self._peer,
                mechanism,
                self._listener,
            )
            return {"error_code": error.code, "mechanisms": offered}, True
        return {"error_code": ErrorCode.none, "mechanisms": offered}, False

    async def authenticate(self, token: bytes) -> tuple[dict[str, Any], bool]:
        """SaslAuthenticate: the response, and whether the connection closes after it."""
        exchange = self._exchange
        try:
            if exchange is None or exchange.complete:
                raise AuthenticationFailed(
                    "SaslAuthenticate before SaslHandshake", code=ErrorCode.illegal_sasl_state
                )
            if len(token) > self.max_token_bytes:
                raise AuthenticationFailed(
                    f"SASL token of {len(token)} bytes is larger than sasl.server.max.receive.size"
                )
            # a token may need a JWKS fetch: off the event loop
            answer = await asyncio.to_thread(exchange.step, token)
            lifetime_ms = self._complete(exchange) if exchange.complete else 0
        except AuthenticationFailed as failure:
            mechanism = exchange.mechanism if exchange is not None else "none"
            self._count(mechanism, "failure")
            log.info(
                "authentication of %s on %s failed: %s", self._peer, self._listener, failure.reason
            )
            refused = {
                "error_code": failure.code,
                "error_message": failure.message,
                "auth_bytes": b"",
                "session_lifetime": 0,
            }
            return refused, True
        return {
            "error_code": ErrorCode.none,
            "error_message": None,
            "auth_bytes": answer,
            "session_lifetime": lifetime_ms,
        }, False

    def _complete(self, exchange: SaslServerExchange) -> int:
        principal = exchange.principal
        if self.principal is not None and principal != self.principal:
            raise AuthenticationFailed(
                f"Cannot change principals during re-authentication from {self.principal}:"
                f" {principal}"
            )
        now = time.time()
        lifetime_ms = session_lifetime_ms(
            now_ms=int(now * 1000),
            credential_expiry_ms=exchange.credential_expiry_ms,
            max_reauth_ms=self._max_reauth_ms,
        )
        self.principal = principal
        self._expires_at = time.monotonic() + lifetime_ms / 1000 if lifetime_ms else None
        self._count(exchange.mechanism, "success")
        log.info(
            "%s authenticated on %s as %s with %s",
            self._peer,
            self._listener,
            principal,
            exchange.mechanism,
        )
        return lifetime_ms

    def _count(self, mechanism: str, result: str) -> None:
        self._authentications.labels(self._listener, mechanism, result).inc()
