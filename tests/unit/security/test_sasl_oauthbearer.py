from __future__ import annotations

import asyncio

import pytest
from aiokafka.abc import AbstractTokenProvider as AiokafkaTokenProvider
from aiokafka.conn import OAuthAuthenticator
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.net.sasl.oauth import AbstractTokenProvider, SaslMechanismOAuth
from oauth_tokens import NOW, RSA_KEY, claims, jwks, public_jwk, signed
from sasl_client_drivers import run_kafka_python

from odradek.broker.security.jwks_keys import JwksKeyResolver
from odradek.broker.security.jwt_validator import JwtValidator
from odradek.broker.security.sasl_mechanism import AuthenticationFailed, IllegalSaslState
from odradek.broker.security.sasl_oauthbearer import OAuthBearerServerExchange

VALIDATOR = JwtValidator(
    JwksKeyResolver(lambda: jwks(public_jwk(RSA_KEY, "key-1")), clock=lambda: NOW),
    clock=lambda: NOW,
)
INVALID_TOKEN = '{"status":"invalid_token"}'
GENERIC = (
    "Authentication failed during authentication due to invalid credentials "
    "with SASL mechanism OAUTHBEARER"
)


class TokenProvider(AbstractTokenProvider):  # type: ignore[misc]
    def __init__(self, token: str, extensions: dict[str, str] | None = None) -> None:
        self._token, self._extensions = token, extensions or {}

    def token(self) -> str:
        return self._token

    def extensions(self) -> dict[str, str]:
        return self._extensions


def _exchange() -> OAuthBearerServerExchange:
    return OAuthBearerServerExchange(VALIDATOR.validate)


def _fails(exchange: OAuthBearerServerExchange, token: bytes) -> AuthenticationFailed:
    with pytest.raises(AuthenticationFailed) as failure:
        exchange.step(token)
    return failure.value


def test_kafka_python_authenticates_with_a_valid_token_and_extensions() -> None:
    exchange = _exchange()
    provider = TokenProvider(signed(claims()), {"traceId": "abc 123", "tenant": "blue"})
    client = SaslMechanismOAuth(sasl_oauth_token_provider=provider)
    run_kafka_python(client, exchange)
    assert client.is_authenticated() and exchange.principal == "User:alice"
    assert exchange.credential_expiry_ms == int((NOW + 3600) * 1000)
    assert exchange.extensions == {"traceId": "abc 123", "tenant": "blue"}
    assert exchange.token is not None and exchange.token.scope == {"kafka.read", "kafka.write"}


def test_aiokafka_authenticates_too() -> None:
    class Provider(AiokafkaTokenProvider):  # type: ignore[misc]
        async def token(self) -> str:
            return signed(claims(sub="bob"))

    async def authenticate() -> OAuthBearerServerExchange:
        exchange = _exchange()
        authenticator = OAuthAuthenticator(sasl_oauth_token_provider=Provider())
        step = await authenticator.step(None)
        while step is not None:
            step = await authenticator.step(exchange.step(step[0]))
        return exchange

    assert asyncio.run(authenticate()).principal == "User:bob"


def test_a_refused_token_gets_the_json_error_then_fails_on_the_clients_dummy_response() -> None:
    exchange = _exchange()
    client = SaslMechanismOAuth(
        sasl_oauth_token_provider=TokenProvider(signed(claims(exp=NOW - 60)))
    )
    with pytest.raises(AuthenticationFailed) as failure:
        run_kafka_python(client, exchange)
    assert failure.value.message == INVALID_TOKEN
    assert "expired" in failure.value.reason and "eyJ" not in failure.value.reason
    assert not exchange.complete and exchange.credential_expiry_ms is None


def test_after_the_error_any_token_fails_the_exchange() -> None:
    exchange = _exchange()
    assert exchange.step(b"n,,\x01auth=Bearer a.b.c\x01\x01") == INVALID_TOKEN.encode()
    assert _fails(exchange, f"n,,\x01auth=Bearer {signed(claims())}\x01\x01".encode()).message == (
        INVALID_TOKEN
    )
    with pytest.raises(IllegalSaslState):
        exchange.step(b"\x01")


def test_an_authzid_must_be_the_tokens_principal() -> None:
    token = signed(claims())
    exchange = _exchange()
    assert exchange.step(f"n,a=alice,\x01auth=Bearer {token}\x01\x01".encode()) == b""
    assert exchange.principal == "User:alice"
    failure = _fails(_exchange(), f"n,a=admin,\x01auth=Bearer {token}\x01\x01".encode())
    assert failure.message == (
        "Authentication failed: Client requested an authorization id (admin) that is "
        "different from the token's principal name (alice)"
    )


def test_the_scheme_is_case_insensitive() -> None:
    exchange = _exchange()
    assert exchange.step(f"n,,\x01auth=bEaReR {signed(claims())}\x01\x01".encode()) == b""


@pytest.mark.parametrize(
    "message",
    [
        b"",
        b"\x01",
        b"n,,\x01\x01",
        b"n,,\x01auth=Basic dXNlcjpwYXNz\x01\x01",
        b"n,,\x01auth=Bearer\x01\x01",
        b"n,,\x01auth=Bearer a/b\x01\x01",
        b"n,,auth=Bearer a.b.c\x01\x01",
        b"n,,\x01auth=Bearer a.b.c\x01",
        b"n,,\x01auth=Bearer a.b.c\x01x1=y\x01\x01",
        b"n,,\x01auth=Bearer a.b.c\x01key=\x01\x01",
        b"n,,\x01auth=Bearer a.b.c\x01\x01\x01",
        b"p=tls-unique,,\x01auth=Bearer a.b.c\x01\x01",
        b"n,a=x=y,\x01auth=Bearer a.b.c\x01\x01",
        b"n,,\x01auth=Bearer a.b.c\xff\x01\x01",
    ],
)
def test_malformed_initial_responses_fail_generically(message: bytes) -> None:
    assert _fails(_exchange(), message).message == GENERIC


_PIECES = [b"n,,", b"\x01", b"auth=", b"Bearer ", b"a.b.c", b"k=v", b"a=alice,", b" ", b"\xff"]


@settings(max_examples=300)
@given(st.binary(max_size=80) | st.lists(st.sampled_from(_PIECES)).map(b"".join))
def test_any_bytes_are_answered_or_raise_authentication_failed(message: bytes) -> None:
    exchange = _exchange()
    try:
        answer = exchange.step(message)
    except AuthenticationFailed:
        return
    assert answer == INVALID_TOKEN.encode() and not exchange.complete
    with pytest.raises(AuthenticationFailed):
        exchange.step(b"\x01")
