from __future__ import annotations

import pytest

from odradek.broker.security.sasl_client import (
    PlainClientExchange,
    SaslClientError,
    SaslClientExchange,
    SaslCredentials,
    ScramClientExchange,
    client_exchange,
    credentials_from_jaas,
)
from odradek.broker.security.sasl_mechanism import AuthenticationFailed, SaslServerExchange
from odradek.broker.security.sasl_plain import PlainServerExchange
from odradek.broker.security.sasl_scram import ScramServerExchange
from odradek.broker.security.scram_credential import (
    ScramCredential,
    ScramMechanism,
    derive_credential,
)

BROKER = SaslCredentials("broker", "broker-secret")
STORED = {m: derive_credential(m, "broker-secret") for m in ScramMechanism}


def _lookup(user: str, mechanism: ScramMechanism) -> ScramCredential | None:
    return STORED[mechanism] if user == "broker" else None


def _server(mechanism: str) -> SaslServerExchange:
    if mechanism == "PLAIN":
        return PlainServerExchange(
            lambda user, password: (user, password) == ("broker", "broker-secret")
        )
    return ScramServerExchange(ScramMechanism(mechanism), _lookup, unknown_user_secret=b"s")


def _run(client: SaslClientExchange, server: SaslServerExchange) -> None:
    token: bytes | None = client.first()
    while token is not None:
        token = client.step(server.step(token))
    assert server.complete


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_the_client_logs_in_to_the_brokers_own_server_exchange(mechanism: str) -> None:
    server = _server(mechanism)
    _run(client_exchange(mechanism, BROKER), server)
    assert server.principal == "User:broker"


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_a_wrong_password_is_refused_by_the_server(mechanism: str) -> None:
    client = client_exchange(mechanism, SaslCredentials("broker", "wrong"))
    with pytest.raises(AuthenticationFailed) as failure:
        _run(client, _server(mechanism))
    assert "wrong" not in failure.value.message


def test_a_user_name_with_comma_and_equals_is_escaped() -> None:
    credential = derive_credential(ScramMechanism.SCRAM_SHA_256, "pw")
    server = ScramServerExchange(
        ScramMechanism.SCRAM_SHA_256,
        lambda user, _: credential if user == "a,b=c" else None,
        unknown_user_secret=b"s",
    )
    _run(ScramClientExchange(ScramMechanism.SCRAM_SHA_256, SaslCredentials("a,b=c", "pw")), server)
    assert server.principal == "User:a,b=c"


def test_a_server_signature_that_does_not_match_is_refused() -> None:
    client = ScramClientExchange(ScramMechanism.SCRAM_SHA_512, BROKER)
    server = _server("SCRAM-SHA-512")
    final = client.step(server.step(client.first()))
    assert final is not None
    server.step(final)
    with pytest.raises(SaslClientError, match="signature"):
        client.step(b"v=" + b"AAAA" * 22)


@pytest.mark.parametrize(
    "server_first",
    [
        b"r=someone-elses-nonce,s=c2FsdA==,i=4096",
        b"r=NONCEserver,s=c2FsdA==,i=1",
        b"r=NONCEserver,s=,i=4096",
        b"r=NONCEserver,s=c2FsdA==",
        b"garbage",
        b"\xff",
    ],
)
def test_a_server_first_message_that_breaks_the_rules_is_refused(server_first: bytes) -> None:
    client = ScramClientExchange(ScramMechanism.SCRAM_SHA_256, BROKER, nonce="NONCE")
    client.first()
    with pytest.raises(SaslClientError) as failure:
        client.step(server_first)
    assert "broker-secret" not in str(failure.value)


def test_plain_expects_no_server_token() -> None:
    client = PlainClientExchange(BROKER)
    assert client.first() == b"\0broker\0broker-secret"
    with pytest.raises(SaslClientError):
        client.step(b"unexpected")


def test_credentials_come_from_the_jaas_login_and_stay_out_of_repr() -> None:
    jaas = (
        "org.apache.kafka.common.security.scram.ScramLoginModule required"
        ' username="broker" password="broker-secret";'
    )
    credentials = credentials_from_jaas(jaas, "sasl.jaas.config")
    assert credentials == BROKER
    assert "broker-secret" not in repr(credentials)


@pytest.mark.parametrize(
    "jaas",
    [
        'org.apache.kafka.common.security.plain.PlainLoginModule required user_a="x";',
        "not jaas at all",
    ],
)
def test_a_jaas_login_without_credentials_is_refused_with_the_key_named(jaas: str) -> None:
    with pytest.raises(
        SaslClientError, match=r"listener\.name\.internal\.plain\.sasl\.jaas\.config"
    ):
        credentials_from_jaas(jaas, "listener.name.internal.plain.sasl.jaas.config")


def test_oauthbearer_cannot_log_in_between_brokers() -> None:
    with pytest.raises(SaslClientError, match="OAUTHBEARER"):
        client_exchange("OAUTHBEARER", BROKER)
