"""SASL/OAUTHBEARER judged by the clients that speak it: confluent-kafka (a token from its
``oauth_cb``) and Kafka's Java console tools (a token from a file, Kafka's
OAuthBearerLoginCallbackHandler) produce and consume over SASL_SSL with JWTs the broker
checks against a JWKS file; tokens that are expired, for another audience or issuer, or
signed by an unknown key are refused with RFC 7628's error, and a key added to the JWKS is
trusted without a restart."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from broker_process import BrokerFactory, unique_name
from cryptography.hazmat.primitives.asymmetric import rsa
from kafka_tools import kafka_tool
from kafka_wire import WireClient
from oauth_tokens import RSA_KEY, claims, jwks, public_jwk, signed
from sasl_wire import SASL_AUTHENTICATION_FAILED, authenticate, closed, handshake, oauthbearer_token
from secured_broker import (
    SecuredBroker,
    confluent_round_trip,
    oauthbearer_settings,
    secured_broker,
)

AUDIENCE = "odradek"
RECORDS = [b"oauth-%d" % i for i in range(5)]
INVALID_TOKEN = b'{"status":"invalid_token"}'


@pytest.fixture(scope="module")
def secured(
    module_broker_factory: BrokerFactory, tmp_path_factory: pytest.TempPathFactory
) -> SecuredBroker:
    directory = tmp_path_factory.mktemp("oauthbearer")
    return secured_broker(
        module_broker_factory,
        directory,
        {**oauthbearer_settings(directory), "sasl.oauthbearer.expected.audience": AUDIENCE},
    )


def token_for(
    user: str, lifetime_s: float = 3600, key: Any = RSA_KEY, kid: str = "key-1", **changes: Any
) -> str:
    now = time.time()
    payload = claims(**{"sub": user, "aud": AUDIENCE, "iat": now - 5, "exp": now + lifetime_s,
                        **changes})  # fmt: skip
    return signed(payload, key, kid=kid)


def confluent_settings(secured: SecuredBroker, user: str) -> dict[str, Any]:
    def oauth_cb(_config: str) -> tuple[str, float, str]:
        return token_for(user), time.time() + 3600, user

    return {
        "bootstrap.servers": secured.sasl_ssl_bootstrap(),
        "security.protocol": "SASL_SSL",
        "ssl.ca.location": str(secured.ca_file),
        "sasl.mechanism": "OAUTHBEARER",
        "oauth_cb": oauth_cb,
    }


def test_confluent_kafka_produces_and_consumes_with_a_token_from_its_callback(
    secured: SecuredBroker,
) -> None:
    topic = unique_name("oauth-confluent")
    assert confluent_round_trip(confluent_settings(secured, "alice"), topic, RECORDS) == RECORDS
    assert "as User:alice with OAUTHBEARER" in secured.broker.log_path.read_text()


def test_kafkas_console_tools_log_in_with_a_token_from_a_file(secured: SecuredBroker) -> None:
    token_file = secured.directory / "erin.jwt"
    token_file.write_text(token_for("erin"))
    config = secured.directory / "oauth-java.properties"
    config.write_text(
        "\n".join(
            [
                "security.protocol=SASL_SSL",
                "ssl.truststore.type=PEM",
                f"ssl.truststore.location={secured.ca_file}",
                "sasl.mechanism=OAUTHBEARER",
                "sasl.login.callback.handler.class="
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler",
                f"sasl.oauthbearer.token.endpoint.url={token_file.as_uri()}",
                "sasl.jaas.config="
                "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ;",
            ]
        )
        + "\n"
    )
    allowed = (
        f"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls={token_file.as_uri()}",
        f"-Dorg.apache.kafka.sasl.oauthbearer.allowed.files={token_file}",
    )
    topic = unique_name("oauth-java")
    bootstrap = ("--bootstrap-server", secured.sasl_ssl_bootstrap(), "--topic", topic)
    kafka_tool("kafka-console-producer", *bootstrap, "--command-config", str(config),
               stdin=b"\n".join(RECORDS).decode() + "\n", java_options=allowed)  # fmt: skip
    consumed = kafka_tool("kafka-console-consumer", *bootstrap, "--from-beginning",
                          "--max-messages", str(len(RECORDS)), "--command-config", str(config),
                          java_options=allowed)  # fmt: skip
    assert [line.encode() for line in consumed.splitlines()] == RECORDS
    assert "as User:erin with OAUTHBEARER" in secured.broker.log_path.read_text()


def oauthbearer_login(secured: SecuredBroker, jwt: str) -> tuple[int, bytes, str | None]:
    """(error code, challenge, final message) of one login on the SASL_PLAINTEXT listener;
    a refused token gets RFC 7628's JSON challenge, then fails on the client's ``\\x01``."""
    with WireClient.to(secured.sasl_plaintext_bootstrap()) as wire:
        assert handshake(wire, "OAUTHBEARER").error_code.value == 0
        first = authenticate(wire, oauthbearer_token(jwt))
        if first.error_code.value != 0 or not first.auth_bytes:
            return first.error_code.value, first.auth_bytes, first.error_message
        second = authenticate(wire, b"\x01")
        assert closed(wire)
        return second.error_code.value, first.auth_bytes, second.error_message


STRANGER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.mark.parametrize(
    "refused",
    [
        pytest.param(lambda: token_for("alice", lifetime_s=-120), id="expired"),
        pytest.param(lambda: token_for("alice", aud="someone-else"), id="other-audience"),
        pytest.param(lambda: token_for("alice", iss="https://evil.example.com"), id="other-issuer"),
        pytest.param(lambda: token_for("alice", key=STRANGER_KEY), id="unknown-signer"),
        pytest.param(lambda: token_for("alice", kid="key-9", key=STRANGER_KEY), id="unknown-kid"),
    ],
)
def test_a_token_the_broker_cannot_trust_is_refused_with_rfc_7628s_error(
    secured: SecuredBroker, refused: Any
) -> None:
    jwt = refused()
    code, challenge, message = oauthbearer_login(secured, jwt)
    assert (code, challenge, message) == (
        SASL_AUTHENTICATION_FAILED,
        INVALID_TOKEN,
        INVALID_TOKEN.decode(),
    )
    assert jwt not in secured.broker.log_path.read_text()
    assert oauthbearer_login(secured, token_for("alice"))[0] == 0


def test_a_key_added_to_the_jwks_is_trusted_without_a_restart(secured: SecuredBroker) -> None:
    rotated = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    impostor = token_for("alice", key=rotated)  # a known key id, but not its key
    assert oauthbearer_login(secured, impostor)[0] == SASL_AUTHENTICATION_FAILED
    jwt = token_for("alice", key=rotated, kid="key-2")
    keys = Path(secured.broker.settings["sasl.oauthbearer.jwks.endpoint.url"][len("file://") :])
    document = json.loads(keys.read_text())
    keys.write_bytes(jwks(*document["keys"], public_jwk(rotated, "key-2")))
    assert oauthbearer_login(secured, jwt) == (0, b"", None)
