"""Unsecured OAUTHBEARER tokens checked as Kafka's OAuthBearerUnsecuredValidatorCallbackHandler
checks them."""

from __future__ import annotations

import base64
import json

import pytest

from odradek.broker.security.jwt_validator import (
    InsufficientScope,
    InvalidToken,
    OAuthBearerToken,
)
from odradek.broker.security.unsecured_jws import (
    UnsecuredJwsValidator,
    UnsecuredValidatorConfig,
    UnsecuredValidatorConfigError,
)

NOW = 1_800_000_000.0


def section(value: object) -> str:
    return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()


def token(claims: dict[str, object], header: dict[str, object] | None = None) -> str:
    return f"{section(header or {'alg': 'none'})}.{section(claims)}."


def validate(value: str, config: UnsecuredValidatorConfig | None = None) -> OAuthBearerToken:
    return UnsecuredJwsValidator(config, clock=lambda: NOW).validate(value)


def test_a_valid_token_names_its_principal_scope_and_lifetime() -> None:
    checked = validate(token({"sub": "alice", "exp": NOW + 60, "iat": NOW, "scope": "a b"}))
    assert checked.principal_name == "alice"
    assert checked.scope == {"a", "b"}
    assert checked.lifetime_ms == (NOW + 60) * 1000


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("a.b", "three dot-separated sections"),
        (token({"sub": "a", "exp": NOW + 60}, {"alg": "RS256"}), "'none' for its algorithm"),
        (token({"sub": "a", "exp": NOW + 60}) + "c2ln", "no signature"),
        ("e30.!!!.", "base64url-encoded JSON"),
        (f"{section([1])}.{section({})}.", "not a JSON object"),
        (token({"exp": NOW + 60}), "no principal name in the claim sub"),
        (token({"sub": " ", "exp": NOW + 60}), "no principal name"),
        (token({"sub": "a"}), "no exp claim"),
        (token({"sub": "a", "exp": "soon"}), "not a NumericDate"),
        (token({"sub": "a", "exp": NOW}), "expired"),
        (token({"sub": "a", "exp": NOW + 60, "iat": NOW + 1}), "issued in the future"),
    ],
)
def test_tokens_kafka_refuses_are_refused(value: str, reason: str) -> None:
    with pytest.raises(InvalidToken, match=reason) as refused:
        validate(value)
    assert refused.value.status == "invalid_token"


def test_the_clock_skew_option_moves_both_bounds() -> None:
    config = UnsecuredValidatorConfig.from_options(
        {"unsecuredValidatorAllowableClockSkewMs": "2000"}
    )
    assert validate(token({"sub": "a", "exp": NOW - 1}), config)
    assert validate(token({"sub": "a", "exp": NOW + 60, "iat": NOW + 1}), config)
    with pytest.raises(InvalidToken, match="expired"):
        validate(token({"sub": "a", "exp": NOW - 2}), config)
    with pytest.raises(InvalidToken, match="exp is not after its iat"):
        validate(token({"sub": "a", "exp": NOW + 1, "iat": NOW + 1}), config)


def test_the_principal_and_scope_claims_and_the_required_scope_come_from_the_options() -> None:
    config = UnsecuredValidatorConfig.from_options(
        {
            "unsecuredValidatorPrincipalClaimName": "client_id",
            "unsecuredValidatorScopeClaimName": "scp",
            "unsecuredValidatorRequiredScope": "kafka write",
        }
    )
    claims = {"client_id": "svc", "exp": NOW + 60, "scp": ["kafka", "write", "read"]}
    assert validate(token(claims), config).principal_name == "svc"
    with pytest.raises(InsufficientScope) as refused:
        validate(token({**claims, "scp": ["kafka"]}), config)
    assert refused.value.status == "insufficient_scope"
    assert refused.value.required == ("kafka", "write")


def test_a_clock_skew_that_is_not_a_count_of_milliseconds_is_refused() -> None:
    with pytest.raises(UnsecuredValidatorConfigError, match="AllowableClockSkewMs"):
        UnsecuredValidatorConfig.from_options({"unsecuredValidatorAllowableClockSkewMs": "-5"})
