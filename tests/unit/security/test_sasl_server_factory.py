from __future__ import annotations

import pytest
from kafka.net.sasl.scram import SaslMechanismScram
from oauth_tokens import NOW, RSA_KEY, claims, jwks, public_jwk, signed
from sasl_client_drivers import run_kafka_python

from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.security.jwks_keys import JwksKeyResolver
from odradek.broker.security.jwt_validator import JwtValidator
from odradek.broker.security.plain_users import PlainUsers
from odradek.broker.security.sasl_mechanism import AuthenticationFailed, session_lifetime_ms
from odradek.broker.security.sasl_oauthbearer import OAuthBearerServerExchange
from odradek.broker.security.sasl_plain import PlainServerExchange
from odradek.broker.security.sasl_scram import ScramServerExchange
from odradek.broker.security.sasl_server_factory import (
    SaslServerMechanisms,
    UnsupportedSaslMechanism,
)
from odradek.broker.security.scram_credential import ScramMechanism, derive_credential

USERS = PlainUsers({"alice": "alice-secret"})
SCRAM = {("alice", m): derive_credential(m, "alice-secret") for m in ScramMechanism}
VALIDATOR = JwtValidator(
    JwksKeyResolver(lambda: jwks(public_jwk(RSA_KEY, "key-1")), clock=lambda: NOW),
    clock=lambda: NOW,
)
ALL = SaslServerMechanisms(
    plain=USERS.verify,
    scram=lambda user, mechanism: SCRAM.get((user, mechanism)),
    oauthbearer=VALIDATOR.validate,
)


def test_a_mechanism_is_offered_when_what_it_checks_against_is_given() -> None:
    assert ALL.names == ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
    assert SaslServerMechanisms(plain=USERS.verify).names == ("PLAIN",)
    assert SaslServerMechanisms().names == ()


def test_only_the_scram_mechanisms_enabled_are_offered() -> None:
    only_256 = SaslServerMechanisms(scram=ALL.scram, scram_mechanisms=("SCRAM-SHA-256",))
    assert only_256.names == ("SCRAM-SHA-256",)
    assert only_256.new_exchange("SCRAM-SHA-256").mechanism == "SCRAM-SHA-256"
    with pytest.raises(UnsupportedSaslMechanism):
        only_256.new_exchange("SCRAM-SHA-512")


@pytest.mark.parametrize(
    ("mechanism", "kind"),
    [
        ("PLAIN", PlainServerExchange),
        ("SCRAM-SHA-256", ScramServerExchange),
        ("SCRAM-SHA-512", ScramServerExchange),
        ("OAUTHBEARER", OAuthBearerServerExchange),
    ],
)
def test_each_offered_mechanism_gets_its_exchange(mechanism: str, kind: type) -> None:
    exchange = ALL.new_exchange(mechanism)
    assert isinstance(exchange, kind) and exchange.mechanism == mechanism


@pytest.mark.parametrize("mechanism", ["GSSAPI", "plain", "SCRAM-SHA-1", ""])
def test_a_mechanism_not_offered_is_unsupported(mechanism: str) -> None:
    with pytest.raises(UnsupportedSaslMechanism) as failure:
        SaslServerMechanisms(plain=USERS.verify).new_exchange(mechanism or "SCRAM-SHA-256")
    assert failure.value.code is ErrorCode.unsupported_sasl_mechanism
    assert failure.value.message == f"Unsupported SASL mechanism {mechanism or 'SCRAM-SHA-256'}"


def test_exchanges_are_independent_and_share_the_unknown_user_secret() -> None:
    first = ALL.new_exchange("SCRAM-SHA-256").step(b"n,,n=nobody,r=a").split(b",")[1]
    second = ALL.new_exchange("SCRAM-SHA-256").step(b"n,,n=nobody,r=b").split(b",")[1]
    assert first == second
    client = SaslMechanismScram(
        sasl_plain_username="alice",
        sasl_plain_password="alice-secret",
        sasl_mechanism="SCRAM-SHA-512",
    )
    exchange = ALL.new_exchange("SCRAM-SHA-512")
    run_kafka_python(client, exchange)
    assert exchange.principal == "User:alice"
    assert "secret" not in repr(ALL).replace("unknown_user_secret", "")


def test_re_authentication_reaches_the_exchange() -> None:
    with pytest.raises(AuthenticationFailed, match="during re-authentication"):
        ALL.new_exchange("PLAIN", reauthentication=True).step(b"")


def test_an_oauthbearer_session_ends_with_its_token() -> None:
    exchange = ALL.new_exchange("OAUTHBEARER")
    exchange.step(f"n,,\x01auth=Bearer {signed(claims())}\x01\x01".encode())
    now_ms = int(NOW * 1000)
    lifetime = session_lifetime_ms(
        now_ms=now_ms, credential_expiry_ms=exchange.credential_expiry_ms, max_reauth_ms=None
    )
    assert lifetime == 3_600_000


@pytest.mark.parametrize(
    ("credential_expiry_ms", "max_reauth_ms", "expected"),
    [
        (None, None, 0),
        (None, 0, 0),
        (None, 60_000, 60_000),
        (1_000 + 30_000, None, 30_000),
        (1_000 + 30_000, 0, 30_000),
        (1_000 + 30_000, 60_000, 30_000),
        (1_000 + 90_000, 60_000, 60_000),
        (500, 60_000, 0),
        (500, None, 0),
    ],
)
def test_the_session_lifetime_is_kafkas(
    credential_expiry_ms: int | None, max_reauth_ms: int | None, expected: int
) -> None:
    assert (
        session_lifetime_ms(
            now_ms=1_000, credential_expiry_ms=credential_expiry_ms, max_reauth_ms=max_reauth_ms
        )
        == expected
    )
