"""The server side of SASL/OAUTHBEARER (RFC 7628) as Kafka's ``OAuthBearerSaslServer``.

The client's initial response is ``n,[a=<authzid>],`` ``\\x01auth=Bearer <token>\\x01``
``[<key>=<value>\\x01]*`` ``\\x01``; the extensions are kept (Kafka's default validator
accepts them all). A valid token is answered with an empty token. A refused one is
answered with the JSON error ``{"status":"invalid_token"}`` (``insufficient_scope`` with
the required ``scope`` when that is what it lacks); the client must then send
``\\x01`` and the exchange fails with that JSON as the message, as RFC 7628 section 3.2.2
has it and Kafka does. Stricter than Kafka, which parses whatever follows as a new
initial response: after the error, any token fails.

The token's expiry is ``credential_expiry_ms``, which bounds the session
(``session_lifetime_ms``) and so forces re-authentication before it runs out.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping

from odradek.broker.security.gs2_header import SaslSyntaxError, split_gs2_header
from odradek.broker.security.jwt_validator import (
    InsufficientScope,
    InvalidToken,
    OAuthBearerToken,
)
from odradek.broker.security.sasl_mechanism import AuthenticationFailed, SaslServerExchange

TokenValidator = Callable[[str], OAuthBearerToken]
"""The token's claims, or InvalidToken; ``JwtValidator.validate``."""

SEPARATOR = "\x01"
AUTH_KEY = "auth"
_KEY = re.compile(r"[A-Za-z]+")
_VALUE = re.compile(r"[\x21-\x7e \t\r\n]+")
_AUTH = re.compile(r"(?P<scheme>[A-Za-z0-9_]+) +(?P<token>[-_.A-Za-z0-9]+)")


class OAuthBearerServerExchange(SaslServerExchange):
    mechanism = "OAUTHBEARER"

    def __init__(self, validate: TokenValidator, *, reauthentication: bool = False) -> None:
        super().__init__(reauthentication=reauthentication)
        self._validate = validate
        self._refusal: AuthenticationFailed | None = None
        self.token: OAuthBearerToken | None = None
        """The validated token once complete (Kafka's ``OAUTHBEARER.token`` property)."""
        self.extensions: Mapping[str, str] = {}
        """The client's SASL extensions once complete (Kafka's other negotiated properties)."""

    @property
    def credential_expiry_ms(self) -> int | None:
        return None if self.token is None else self.token.lifetime_ms

    def _evaluate(self, token: bytes) -> bytes:
        if self._refusal is not None:
            raise self._refusal
        try:
            authzid, value, extensions = parse_initial_response(token.decode("utf-8"))
        except (UnicodeDecodeError, SaslSyntaxError) as error:
            raise self._invalid_credentials(
                f"Invalid OAUTHBEARER client first message: {error}"
            ) from None
        try:
            validated = self._validate(value)
        except InvalidToken as error:
            status = _error_status(error)
            self._refusal = AuthenticationFailed(status, reason=f"invalid token: {error}")
            return status.encode()
        if authzid and authzid != validated.principal_name:
            raise AuthenticationFailed(
                f"Authentication failed: Client requested an authorization id ({authzid}) that "
                f"is different from the token's principal name ({validated.principal_name})"
            )
        self.token, self.extensions = validated, extensions
        self._succeed(validated.principal_name)
        return b""


def parse_initial_response(message: str) -> tuple[str, str, dict[str, str]]:
    """(authzid, token, extensions) of a client initial response."""
    header, rest = split_gs2_header(message)
    if not rest.startswith(SEPARATOR) or not rest.endswith(SEPARATOR * 2):
        raise SaslSyntaxError("the key-value pairs are not framed by \\x01")
    pairs: dict[str, str] = {}
    for pair in rest[1:-2].split(SEPARATOR) if len(rest) > 2 else []:
        key, equals, value = pair.partition("=")
        if not _KEY.fullmatch(key) or not equals or not _VALUE.fullmatch(value):
            raise SaslSyntaxError("a key-value pair is not of the form key=value")
        pairs[key] = value
    auth = _AUTH.fullmatch(pairs.pop(AUTH_KEY, ""))
    if auth is None:
        raise SaslSyntaxError("'auth' is missing or is not '<scheme> <token>'")
    if auth["scheme"].lower() != "bearer":
        raise SaslSyntaxError("the 'auth' scheme is not Bearer")
    return header.authzid, auth["token"], pairs


def _error_status(error: InvalidToken) -> str:
    """The server's JSON error (RFC 7628 section 3.2.2) as Kafka words it: the status, and
    for a missing scope the required one."""
    status = {"status": error.status}
    if isinstance(error, InsufficientScope):
        status["scope"] = "[" + ", ".join(error.required) + "]"
    return json.dumps(status, separators=(",", ":"))
