"""Validation of an OAUTHBEARER access token (a signed JWT) as Kafka's broker validator
(``BrokerJwtValidator`` over jose4j) does it:

- a JWS with three sections, signed (never ``none``) by a key of the JWKS, found by ``kid``;
- ``exp`` and ``iat`` required, ``exp`` and ``nbf`` checked with the clock skew;
- ``iss`` equal to ``sasl.oauthbearer.expected.issuer`` when that is set;
- ``aud`` holding one of ``sasl.oauthbearer.expected.audience`` when that is set, and a
  token with an ``aud`` refused when it is not (jose4j's default, which Kafka keeps);
- the principal from the ``sasl.oauthbearer.sub.claim.name`` claim, a non-blank string;
- the scopes from the ``sasl.oauthbearer.scope.claim.name`` claim, a string or a list of
  strings, none blank or repeated. A string is split on spaces (RFC 8693); Kafka keeps it
  as one scope. Kafka uses scopes for nothing but the token it hands to plug-ins.

PyJWT checks the signature only; the claims are checked here against an injectable clock.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import jwt

from odradek.broker.security.jwks_keys import VerificationKey


class InvalidToken(Exception):
    """Why a token was refused, for the broker's log (it never holds the token)."""

    status = "invalid_token"  # RFC 6750's error code, which the client is told


class InsufficientScope(InvalidToken):
    status = "insufficient_scope"

    def __init__(self, required: tuple[str, ...], reason: str) -> None:
        super().__init__(reason)
        self.required = required


class KeyResolver(Protocol):
    def key_for(self, kid: str | None, algorithm: str) -> VerificationKey | None: ...


@dataclass(frozen=True)
class JwtValidationConfig:
    """Kafka's settings and defaults for the broker's token validation."""

    expected_audience: tuple[str, ...] = ()  # sasl.oauthbearer.expected.audience
    expected_issuer: str | None = None  # sasl.oauthbearer.expected.issuer
    clock_skew_s: int = 30  # sasl.oauthbearer.clock.skew.seconds
    sub_claim_name: str = "sub"  # sasl.oauthbearer.sub.claim.name
    scope_claim_name: str = "scope"  # sasl.oauthbearer.scope.claim.name


@dataclass(frozen=True)
class OAuthBearerToken:
    """A validated token, with the names of Kafka's ``OAuthBearerToken``."""

    value: str = field(repr=False)
    principal_name: str
    scope: frozenset[str]
    lifetime_ms: int
    """When the token expires (``exp``), in epoch milliseconds."""
    start_time_ms: int
    """When it was issued (``iat``), in epoch milliseconds."""


class JwtValidator:
    def __init__(
        self,
        keys: KeyResolver,
        config: JwtValidationConfig | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._keys = keys
        self._config = config or JwtValidationConfig()
        self._clock = clock

    def validate(self, token: str) -> OAuthBearerToken:
        """The token's principal, scopes and lifetime; raises InvalidToken."""
        if token.count(".") != 2:
            raise InvalidToken(
                "Malformed JWT provided; expected three sections (header, payload, and signature)"
            )
        claims = self._verified_claims(token)
        now = self._clock()
        skew = self._config.clock_skew_s
        expires = _required_date(claims, "exp")
        issued = _required_date(claims, "iat")
        not_before = numeric_date(claims, "nbf")
        if now >= expires + skew:
            raise InvalidToken(
                f"the token expired at {expires} (exp), {skew} s of clock skew allowed"
            )
        if not_before is not None and now + skew < not_before:
            raise InvalidToken(f"the token is not valid before {not_before} (nbf)")
        self._check_issuer(claims)
        self._check_audience(claims)
        return OAuthBearerToken(
            value=token,
            principal_name=self._subject(claims),
            scope=token_scopes(claims, self._config.scope_claim_name),
            lifetime_ms=int(expires * 1000),
            start_time_ms=int(issued * 1000),
        )

    def _verified_claims(self, token: str) -> dict[str, Any]:
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as error:
            raise InvalidToken(f"unreadable JWT header: {error}") from None
        except RecursionError:  # JSON nested deeper than the parser goes
            raise InvalidToken("unreadable JWT header: nested too deep") from None
        algorithm, kid = header.get("alg"), header.get("kid")
        if not isinstance(algorithm, str) or algorithm.lower() == "none":
            raise InvalidToken("the token is not signed (no 'alg' or 'alg' none)")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("the token's 'kid' header is not a string")
        key = self._keys.key_for(kid, algorithm)
        if key is None:
            shown = None if kid is None else kid[:100]  # a client can send a kid of any length
            raise InvalidToken(
                f"no key of the JWKS verifies {algorithm[:20]} tokens with kid {shown!r}"
            )
        try:
            decoded = jwt.PyJWS().decode_complete(token, key=key.key, algorithms=[algorithm])
            claims = json.loads(decoded["payload"])
        except jwt.PyJWTError as error:
            raise InvalidToken(f"the token's signature does not verify: {error}") from None
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            raise InvalidToken("the token's payload is not JSON") from None
        if not isinstance(claims, dict):
            raise InvalidToken("the token's payload is not a JSON object")
        return claims

    def _check_issuer(self, claims: dict[str, Any]) -> None:
        expected = self._config.expected_issuer
        if expected is not None and claims.get("iss") != expected:
            raise InvalidToken(f"the issuer (iss) is not the expected {expected!r}")

    def _check_audience(self, claims: dict[str, Any]) -> None:
        audience = claims.get("aud")
        if audience is None:
            if self._config.expected_audience:
                raise InvalidToken("the token has no audience (aud) claim")
            return
        audiences = [audience] if isinstance(audience, str) else audience
        if not isinstance(audiences, list) or not all(isinstance(a, str) for a in audiences):
            raise InvalidToken("the audience (aud) claim is neither a string nor a list of strings")
        expected = self._config.expected_audience
        if not set(audiences) & set(expected):
            raise InvalidToken(
                f"the audience (aud) claim holds none of the expected {list(expected)}"
            )

    def _subject(self, claims: dict[str, Any]) -> str:
        name = self._config.sub_claim_name
        subject = claims.get(name)
        if not isinstance(subject, str) or not subject.strip():
            raise InvalidToken(f"{name} value must be non-null, non-empty, and non-whitespace")
        return subject.strip()


def token_scopes(claims: dict[str, Any], name: str) -> frozenset[str]:
    """The scopes of the ``name`` claim: a string or a list of strings, none blank or
    repeated. A string is split on spaces (RFC 8693); Kafka keeps it as one scope."""
    raw = claims.get(name)
    if isinstance(raw, str):
        scopes = raw.split(" ")
    elif isinstance(raw, list):
        scopes = raw
    else:
        return frozenset()
    cleaned: set[str] = set()
    for scope in scopes:
        if not isinstance(scope, str) or not scope.strip():
            raise InvalidToken(f"{name} value must be non-null, non-empty, and non-whitespace")
        if scope.strip() in cleaned:
            raise InvalidToken(f"{name} value must not contain duplicates")
        cleaned.add(scope.strip())
    return frozenset(cleaned)


def _required_date(claims: dict[str, Any], name: str) -> float:
    value = numeric_date(claims, name)
    if value is None:
        raise InvalidToken(f"the token has no {name} claim")
    return value


def numeric_date(claims: dict[str, Any], name: str) -> float | None:
    """A NumericDate claim in seconds, None when absent. Python's JSON reads NaN, Infinity
    and integers of any size, none of which is a date."""
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value < _LATEST_DATE:
        return float(value)
    raise InvalidToken(f"the {name} claim is not a NumericDate")


_LATEST_DATE = 1e13  # seconds: year 318857, far past any real token, far below float limits
