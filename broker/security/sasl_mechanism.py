"""What every server-side SASL mechanism offers the connection: one exchange object per
authentication attempt, fed the client's tokens (SaslAuthenticate's ``auth_bytes``) and
answering the server's, plus the failures Kafka reports and the session lifetime it
grants (KIP-368).

An exchange never raises anything but ``AuthenticationFailed`` for what a client sends,
so the connection can answer every bad token with an error response instead of dropping
the connection on an unexpected exception.
"""

from __future__ import annotations

import abc

from odradek.broker.protocol.errors import ErrorCode, KafkaError


class AuthenticationFailed(KafkaError):
    """The exchange failed. ``message`` is what the client is told (SaslAuthenticate's
    error message) and may be logged; ``reason`` is the detail for the broker's log only.
    Neither ever holds a password, a key, a proof or a token."""

    def __init__(
        self,
        message: str,
        *,
        reason: str = "",
        code: ErrorCode = ErrorCode.sasl_authentication_failed,
    ) -> None:
        super().__init__(code, message)
        self.reason = reason or message


class IllegalSaslState(AuthenticationFailed):
    """A token arrived when the exchange expects none (it completed or failed), as
    Kafka's ``IllegalSaslStateException``."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code=ErrorCode.illegal_sasl_state)


def invalid_credentials(
    mechanism: str, *, reauthentication: bool, reason: str
) -> AuthenticationFailed:
    """Kafka's answer to a mechanism's plain ``SaslException``: it names only the phase and
    the mechanism, so a client learns nothing about which check failed (unknown user,
    wrong password, malformed message)."""
    phase = "re-authentication" if reauthentication else "authentication"
    return AuthenticationFailed(
        f"Authentication failed during {phase} due to invalid credentials "
        f"with SASL mechanism {mechanism}",
        reason=reason,
    )


class SaslServerExchange(abc.ABC):
    """One authentication attempt on the server side of one mechanism.

    ``step`` takes each client token in turn and returns the server's answer; once
    ``complete`` is true the client is authenticated as ``principal``. A failure is final:
    every later ``step`` raises ``IllegalSaslState``.
    """

    mechanism: str

    def __init__(self, *, reauthentication: bool = False) -> None:
        self.reauthentication = reauthentication
        self._principal: str | None = None
        self._failed = False

    def step(self, token: bytes) -> bytes:
        if self._principal is not None or self._failed:
            state = "complete" if self._principal is not None else "failed"
            raise IllegalSaslState(
                f"Unexpected SASL token: the {self.mechanism} exchange has already {state}"
            )
        try:
            return self._evaluate(bytes(token))
        except AuthenticationFailed:
            self._failed = True
            raise

    @property
    def complete(self) -> bool:
        return self._principal is not None

    @property
    def principal(self) -> str:
        """``User:<name>``, as Kafka's default principal builder names SASL users."""
        if self._principal is None:
            raise RuntimeError(f"the {self.mechanism} exchange has not completed")
        return self._principal

    @property
    def credential_expiry_ms(self) -> int | None:
        """When the credential stops being valid (epoch ms), for mechanisms whose
        credentials expire (OAUTHBEARER); None for passwords, as in Kafka."""
        return None

    @abc.abstractmethod
    def _evaluate(self, token: bytes) -> bytes:
        """Answer one client token; call ``_succeed`` when the client is authenticated."""

    def _succeed(self, user: str) -> None:
        self._principal = f"User:{user}"

    def _invalid_credentials(self, reason: str) -> AuthenticationFailed:
        return invalid_credentials(
            self.mechanism, reauthentication=self.reauthentication, reason=reason
        )


def session_lifetime_ms(
    *, now_ms: int, credential_expiry_ms: int | None, max_reauth_ms: int | None
) -> int:
    """SaslAuthenticate v1's ``session_lifetime_ms`` as Kafka computes it: the shorter of
    ``connections.max.reauth.ms`` (when positive) and the credential's remaining life,
    never negative; 0 (no expiry) when neither applies."""
    max_reauth = max_reauth_ms if max_reauth_ms is not None and max_reauth_ms > 0 else None
    if credential_expiry_ms is None:
        return max_reauth or 0
    remaining = max(0, credential_expiry_ms - now_ms)
    return remaining if max_reauth is None else min(remaining, max_reauth)
