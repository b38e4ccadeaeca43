from __future__ import annotations

import base64
import hmac
import json
from typing import Any

import jwt
import pytest
from hypothesis import given
from hypothesis import strategies as st
from oauth_tokens import (
    EC_KEY,
    ISSUER,
    NOW,
    ROTATED_RSA_KEY,
    RSA_KEY,
    RSA_PUBLIC_PEM,
    claims,
    jwks,
    public_jwk,
    signed,
)

from odradek.broker.security.jwks_keys import JwksKeyResolver
from odradek.broker.security.jwt_validator import (
    InvalidToken,
    JwtValidationConfig,
    JwtValidator,
)

JWKS = jwks(public_jwk(RSA_KEY, "key-1"), public_jwk(EC_KEY, "ec-1"))


def _validator(
    document: bytes = JWKS, config: JwtValidationConfig | None = None, now: float = NOW
) -> JwtValidator:
    keys = JwksKeyResolver(lambda: document, clock=lambda: now)
    return JwtValidator(keys, config, clock=lambda: now)


def _refused(token: str, validator: JwtValidator | None = None) -> str:
    with pytest.raises(InvalidToken) as failure:
        (validator or _validator()).validate(token)
    return str(failure.value)


def test_a_valid_token_gives_the_principal_scopes_and_lifetime() -> None:
    token = signed(claims())
    validated = _validator().validate(token)
    assert validated.principal_name == "alice"
    assert validated.scope == {"kafka.read", "kafka.write"}
    assert validated.lifetime_ms == int((NOW + 3600) * 1000)
    assert validated.start_time_ms == int((NOW - 60) * 1000)
    assert validated.value == token and token not in repr(validated)


def test_an_ec_key_verifies_es256_tokens() -> None:
    token = signed(claims(), EC_KEY, kid="ec-1", algorithm="ES256")
    assert _validator().validate(token).principal_name == "alice"


def test_expiry_is_checked_with_the_clock_skew() -> None:
    assert _validator().validate(signed(claims(exp=NOW - 29))).principal_name == "alice"
    assert "expired" in _refused(signed(claims(exp=NOW - 30)))
    strict = _validator(config=JwtValidationConfig(clock_skew_s=0))
    assert "expired" in _refused(signed(claims(exp=NOW)), strict)


def test_not_before_is_checked_with_the_clock_skew() -> None:
    assert _validator().validate(signed(claims(nbf=NOW + 29))).principal_name == "alice"
    assert "not valid before" in _refused(signed(claims(nbf=NOW + 31)))


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"exp": None}, "no exp claim"),
        ({"iat": None}, "no iat claim"),
        ({"exp": "tomorrow"}, "exp claim is not a NumericDate"),
        ({"exp": True}, "exp claim is not a NumericDate"),
        ({"exp": float("nan")}, "exp claim is not a NumericDate"),
        ({"exp": float("inf")}, "exp claim is not a NumericDate"),
        ({"exp": 10**400}, "exp claim is not a NumericDate"),
        ({"iat": -1}, "iat claim is not a NumericDate"),
        ({"nbf": [1]}, "nbf claim is not a NumericDate"),
    ],
)
def test_dates_must_be_numeric_and_exp_and_iat_are_required(
    changes: dict[str, Any], reason: str
) -> None:
    assert reason in _refused(signed(claims(**changes)))


def test_the_audience_must_match_when_expected_and_be_absent_when_not() -> None:
    expecting = _validator(config=JwtValidationConfig(expected_audience=("kafka", "other")))
    assert expecting.validate(signed(claims(aud="kafka"))).principal_name == "alice"
    assert expecting.validate(signed(claims(aud=["web", "other"]))).principal_name == "alice"
    assert "none of the expected" in _refused(signed(claims(aud="web")), expecting)
    assert "no audience" in _refused(signed(claims()), expecting)
    assert "neither a string nor a list" in _refused(signed(claims(aud=[1])), expecting)
    assert "none of the expected" in _refused(signed(claims(aud="kafka")))


def test_the_issuer_must_match_when_expected() -> None:
    expecting = _validator(config=JwtValidationConfig(expected_issuer=ISSUER))
    assert expecting.validate(signed(claims())).principal_name == "alice"
    assert "issuer" in _refused(signed(claims(iss="https://evil.example.com")), expecting)
    assert "issuer" in _refused(signed(claims(iss=None)), expecting)
    assert _validator().validate(signed(claims(iss="anyone"))).principal_name == "alice"


def test_the_subject_comes_from_the_configured_claim_and_must_not_be_blank() -> None:
    by_client_id = _validator(config=JwtValidationConfig(sub_claim_name="client_id"))
    token = signed(claims(client_id="  billing-service "))
    assert by_client_id.validate(token).principal_name == "billing-service"
    message = "client_id value must be non-null, non-empty, and non-whitespace"
    assert _refused(signed(claims()), by_client_id) == message
    assert "sub value must be" in _refused(signed(claims(sub="   ")))
    assert "sub value must be" in _refused(signed(claims(sub=42)))


@pytest.mark.parametrize(
    ("scope", "expected"),
    [
        ("read write", {"read", "write"}),
        (["read", " write "], {"read", "write"}),
        (None, set()),
        (7, set()),
    ],
)
def test_scopes_from_a_string_or_a_list(scope: object, expected: set[str]) -> None:
    assert _validator().validate(signed(claims(scope=scope))).scope == expected


@pytest.mark.parametrize(
    ("scope", "reason"),
    [("read  write", "non-empty"), (["read", "read"], "duplicates"), (["read", 1], "non-null")],
)
def test_blank_or_repeated_scopes_are_refused(scope: object, reason: str) -> None:
    assert reason in _refused(signed(claims(scope=scope)))


def test_a_token_signed_by_another_key_under_a_known_kid_is_refused() -> None:
    token = signed(claims(), ROTATED_RSA_KEY, kid="key-1")
    assert "signature does not verify" in _refused(token)


def test_unsigned_and_symmetric_tokens_are_refused() -> None:
    assert "not signed" in _refused(jwt.encode(claims(), None, algorithm="none"))
    # The classic confusion: HS256 keyed with the RSA public key the JWKS publishes.
    header = base64.urlsafe_b64encode(b'{"alg":"HS256","kid":"key-1"}').rstrip(b"=")
    body = base64.urlsafe_b64encode(json.dumps(claims()).encode()).rstrip(b"=")
    forged = hmac.digest(RSA_PUBLIC_PEM, header + b"." + body, "sha256")
    token = b".".join([header, body, base64.urlsafe_b64encode(forged).rstrip(b"=")]).decode()
    assert "no key of the JWKS verifies HS256" in _refused(token)


def test_a_key_whose_jwk_names_an_algorithm_verifies_only_that_one() -> None:
    validator = _validator(jwks(public_jwk(RSA_KEY, "key-1", alg="RS256")))
    assert validator.validate(signed(claims())).principal_name == "alice"
    assert "no key" in _refused(signed(claims(), algorithm="PS256"), validator)


def test_a_token_without_kid_uses_the_only_key_for_its_algorithm() -> None:
    assert _validator().validate(signed(claims(), kid=None)).principal_name == "alice"
    two_rsa_keys = _validator(jwks(public_jwk(RSA_KEY, "a"), public_jwk(ROTATED_RSA_KEY, "b")))
    assert "no key" in _refused(signed(claims(), kid=None), two_rsa_keys)


@pytest.mark.parametrize(
    "token",
    [
        "",
        "abc",
        "a.b",
        "a.b.c",
        "..",
        "a.b.c.d",
        "eyJhbGciOiJSUzI1NiJ9.e30.",
        signed(claims())[:-10],
        signed(claims()).replace(".", "x.", 1),
    ],
)
def test_garbage_is_refused(token: str) -> None:
    _refused(token)


@given(
    st.lists(
        st.one_of(
            st.binary(max_size=60).map(lambda b: base64.urlsafe_b64encode(b).decode()),
            st.recursive(
                st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=5),
                lambda inner: (
                    st.lists(inner, max_size=3)
                    | st.dictionaries(st.sampled_from(["alg", "kid", "exp", "sub"]), inner)
                ),
                max_leaves=8,
            ).map(
                lambda value: (
                    base64.urlsafe_b64encode(json.dumps(value).encode()).decode().rstrip("=")
                )
            ),
        ),
        min_size=3,
        max_size=3,
    ).map(".".join)
)
def test_jwt_shaped_garbage_raises_invalid_token_only(token: str) -> None:
    _refused(token)


@given(st.text(max_size=80))
def test_any_text_raises_invalid_token_only(token: str) -> None:
    _refused(token)
