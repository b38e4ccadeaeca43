"""The server side of SASL/PLAIN (RFC 4616) as Kafka's ``PlainSaslServer``: one message,
``[authzid] NUL authcid NUL passwd``, answered with an empty token.

The checks and their order are Kafka's: a missing name or password is a plain failure;
a wrong password gets "Invalid username or password" (the same for an unknown user); an
authzid other than the name is refused. Stricter than Kafka: a message with more than two
NULs is malformed rather than cut at the third, and it must be UTF-8.
"""

from __future__ import annotations

from collections.abc import Callable

from odradek.broker.security.sasl_mechanism import AuthenticationFailed, SaslServerExchange

PasswordVerifier = Callable[[str, str], bool]
"""(user name, password) -> whether they match; ``PlainUsers.verify``."""


class PlainServerExchange(SaslServerExchange):
    mechanism = "PLAIN"

    def __init__(self, verify: PasswordVerifier, *, reauthentication: bool = False) -> None:
        super().__init__(reauthentication=reauthentication)
        self._verify = verify

    def _evaluate(self, token: bytes) -> bytes:
        try:
            fields = token.decode("utf-8").split("\x00")
        except UnicodeDecodeError:
            raise self._invalid_credentials("the PLAIN message is not UTF-8") from None
        if len(fields) != 3:
            raise self._invalid_credentials(
                f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(fields)}"
            )
        authzid, username, password = fields
        if not username:
            raise self._invalid_credentials("Authentication failed: username not specified")
        if not password:
            raise self._invalid_credentials("Authentication failed: password not specified")
        if not self._verify(username, password):
            raise AuthenticationFailed(
                "Authentication failed: Invalid username or password",
                reason=f"Invalid username or password for user {username!r}",
            )
        if authzid and authzid != username:
            raise AuthenticationFailed(
                "Authentication failed: Client requested an authorization id that is "
                "different from username"
            )
        self._succeed(username)
        return b""
