"""Validation of unsecured OAUTHBEARER tokens (``{"alg":"none"}``, no signature) as Kafka's
``OAuthBearerUnsecuredValidatorCallbackHandler`` does it, for development set-ups and the
clients' test suites written against Kafka's default. A listener uses it only when its
``oauthbearer.sasl.server.callback.handler.class`` names that class: unlike Kafka, Odradek
never falls back to it.

Kafka's checks and JAAS options (``unsecuredValidator*`` of the listener's
``OAuthBearerLoginModule`` entry):

- three dot-separated base64url sections, the header's ``alg`` ``none``, the last empty;
- the principal claim (``unsecuredValidatorPrincipalClaimName``, default ``sub``) a
  non-blank string;
- ``exp`` required, ``iat`` optional, both numbers of seconds; ``exp`` after ``iat``; the
  token refused once ``exp`` has passed and while ``iat`` lies in the future, each by more
  than ``unsecuredValidatorAllowableClockSkewMs`` (default 0);
- every scope of ``unsecuredValidatorRequiredScope`` (space-separated) in the token's
  scope claim (``unsecuredValidatorScopeClaimName``, default ``scope``), else
  ``insufficient_scope``.
"""

from __future__ import annotations

import base64
import binascii
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from odradek.broker.security.jwt_validator import (
    InsufficientScope,
    InvalidToken,
    OAuthBearerToken,
    numeric_date,
    token_scopes,
)


class UnsecuredValidatorConfigError(ValueError):
    pass


@dataclass(frozen=True)
class UnsecuredValidatorConfig:
    principal_claim_name: str = "sub"
    scope_claim_name: str = "scope"
    required_scope: tuple[str, ...] = ()
    clock_skew_ms: int = 0

    @classmethod
    def from_options(cls, options: Mapping[str, str]) -> UnsecuredValidatorConfig:
        """From the ``unsecuredValidator*`` options of a JAAS login module entry."""

        def option(name: str) -> str:
            return options.get(f"unsecuredValidator{name}", "").strip()

        skew = option("AllowableClockSkewMs") or "0"
        if not skew.isdigit():
            raise UnsecuredValidatorConfigError(
                f"unsecuredValidatorAllowableClockSkewMs: {skew!r} is not a whole number of"
                " milliseconds (0 or more)"
            )
        return cls(
            principal_claim_name=option("PrincipalClaimName") or "sub",
            scope_claim_name=option("ScopeClaimName") or "scope",
            required_scope=tuple(option("RequiredScope").split()),
            clock_skew_ms=int(skew),
        )


class UnsecuredJwsValidator:
    def __init__(
        self,
        config: UnsecuredValidatorConfig | None = None,
        *,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._config = config or UnsecuredValidatorConfig()
        self._clock = clock

    def validate(self, token: str) -> OAuthBearerToken:
        """The token's principal, scopes and lifetime; raises InvalidToken."""
        config = self._config
        claims = _unsecured_claims(token)
        principal = claims.get(config.principal_claim_name)
        if not isinstance(principal, str) or not principal.strip():
            raise InvalidToken(f"no principal name in the claim {config.principal_claim_name}")
        expires = numeric_date(claims, "exp")
        if expires is None:
            raise InvalidToken("the token has no exp claim")
        issued = numeric_date(claims, "iat")
        now_ms = self._clock() * 1000
        skew = config.clock_skew_ms
        if issued is not None and issued * 1000 > now_ms + skew:
            raise InvalidToken(
                f"the token is issued in the future (iat {issued}), {skew} ms allowed"
            )
        if now_ms - skew >= expires * 1000:
            raise InvalidToken(
                f"the token expired at {expires} (exp), {skew} ms of clock skew allowed"
            )
        if issued is not None and expires <= issued:
            raise InvalidToken("the token's exp is not after its iat")
        scope = token_scopes(claims, config.scope_claim_name)
        missing = [item for item in config.required_scope if item not in scope]
        if missing:
            raise InsufficientScope(config.required_scope, f"the token's scope lacks {missing}")
        return OAuthBearerToken(
            value=token,
            principal_name=principal.strip(),
            scope=scope,
            lifetime_ms=round(expires * 1000),
            start_time_ms=round((issued if issued is not None else now_ms / 1000) * 1000),
        )


def _unsecured_claims(token: str) -> dict[str, Any]:
    sections = token.split(".")
    if len(sections) != 3:
        raise InvalidToken("an unsecured JWS has three dot-separated sections")
    header, claims = (_json_object(section) for section in sections[:2])
    if header.get("alg") != "none":
        raise InvalidToken("an unsecured JWS has 'none' for its algorithm")
    if sections[2]:
        raise InvalidToken("an unsecured JWS has no signature")
    return claims


def _json_object(section: str) -> dict[str, Any]:
    try:
        decoded = json.loads(base64.urlsafe_b64decode(section + "=" * (-len(section) % 4)))
    except (binascii.Error, ValueError, RecursionError):
        raise InvalidToken("a section is not base64url-encoded JSON") from None
    if not isinstance(decoded, dict):
        raise InvalidToken("a section is not a JSON object")
    return decoded
