"""Re-authentication (KIP-368) judged by the clients that do it: with
``connections.max.reauth.ms`` short on the SASL_PLAINTEXT listener, confluent-kafka and
Kafka's Java producer log in again on the same connection while they produce, losing
nothing; an OAUTHBEARER session ends with its token, and confluent-kafka re-authenticates
with a fresh token from its callback; a client that does not re-authenticate has its
connection closed at its first request after the session ran out."""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from typing import Any

import pytest
from broker_process import BrokerFactory, unique_name
from confluent_kafka import Producer
from kafka_tools import kafka_tool
from kafka_wire import WireClient, metadata_request
from oauth_tokens import RSA_KEY, claims, signed
from sasl_wire import authenticate, closed, handshake, oauthbearer_token, plain_token
from secured_broker import SecuredBroker, oauthbearer_settings, secured_broker

MAX_REAUTH_MS = 2000
RUN_S = 7.0


@pytest.fixture(scope="module")
def secured(
    module_broker_factory: BrokerFactory, tmp_path_factory: pytest.TempPathFactory
) -> SecuredBroker:
    directory = tmp_path_factory.mktemp("reauthentication")
    return secured_broker(
        module_broker_factory,
        directory,
        {
            **oauthbearer_settings(directory),
            "listener.name.sasl_plaintext.connections.max.reauth.ms": str(MAX_REAUTH_MS),
        },
    )


def logins_by_connection(secured: SecuredBroker, user: str) -> Counter[str]:
    """How often each client connection authenticated as ``user``."""
    pattern = re.compile(r"(\('127\.0\.0\.1', \d+\)) authenticated on \S+ as User:" + user + " ")
    return Counter(pattern.findall(secured.broker.log_path.read_text()))


def produce_for(settings: dict[str, Any], topic: str, seconds: float) -> int:
    """Produce a record every 50 ms for ``seconds``; how many were delivered (any delivery
    error fails the test)."""
    errors: list[Any] = []
    delivered = 0

    def on_delivery(error: Any, _message: Any) -> None:
        nonlocal delivered
        if error is not None:
            errors.append(error)
        else:
            delivered += 1

    producer = Producer({**settings, "error_cb": errors.append})
    sent = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        producer.produce(topic, b"record-%d" % sent, on_delivery=on_delivery)
        sent += 1
        producer.poll(0.05)
    assert producer.flush(30) == 0
    assert errors == []
    assert delivered == sent
    return sent


def test_confluent_kafka_re_authenticates_on_the_same_connection_while_producing(
    secured: SecuredBroker,
) -> None:
    settings = {
        "bootstrap.servers": secured.sasl_plaintext_bootstrap(),
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "carol",
        "sasl.password": "carol-secret",
    }
    assert produce_for(settings, unique_name("reauth-confluent"), RUN_S) > 100
    # every MAX_REAUTH_MS at the latest, so at least 3 logins on the busiest connection
    assert max(logins_by_connection(secured, "carol").values()) >= 3


def test_kafkas_java_producer_re_authenticates_on_the_same_connection(
    secured: SecuredBroker,
) -> None:
    config = secured.directory / "reauth-java.properties"
    config.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required"
        ' username="bob" password="bob-secret";\n'
    )
    printed = kafka_tool("kafka-verifiable-producer", "--bootstrap-server",
                         secured.sasl_plaintext_bootstrap(), "--topic", unique_name("reauth-java"),
                         "--max-messages", "70", "--throughput", "10", "--acks", "-1",
                         "--command-config", str(config))  # fmt: skip
    events = Counter(json.loads(line)["name"] for line in printed.splitlines())
    assert events["producer_send_success"] == 70 and events["producer_send_error"] == 0
    assert max(logins_by_connection(secured, "bob").values()) >= 3


def test_a_client_that_does_not_re_authenticate_is_closed_at_its_next_request(
    secured: SecuredBroker,
) -> None:
    with WireClient.to(secured.sasl_plaintext_bootstrap()) as wire:
        assert handshake(wire, "PLAIN").error_code.value == 0
        answer = authenticate(wire, plain_token("bob", "bob-secret"))
        assert answer.error_code.value == 0
        lifetime_s = answer.session_lifetime.total_seconds()
        assert 0 < lifetime_s <= MAX_REAUTH_MS / 1000
        assert wire.metadata(None).brokers  # served while the session lasts
        time.sleep(lifetime_s + 0.3)
        wire.send(metadata_request(None))
        assert closed(wire)


def token_for(user: str, lifetime_s: float) -> str:
    now = time.time()
    return signed(claims(sub=user, iat=now - 1, exp=now + lifetime_s), RSA_KEY, kid="key-1")


def test_an_oauthbearer_session_ends_with_its_token(secured: SecuredBroker) -> None:
    with WireClient.to(secured.sasl_plaintext_bootstrap()) as wire:  # sessions of 2 s at most
        assert handshake(wire, "OAUTHBEARER").error_code.value == 0
        answer = authenticate(wire, oauthbearer_token(token_for("alice", lifetime_s=1.5)))
        assert answer.error_code.value == 0
        assert 0 < answer.session_lifetime.total_seconds() <= 1.5


def test_confluent_kafka_re_authenticates_with_a_fresh_token_before_the_old_one_expires(
    secured: SecuredBroker,
) -> None:
    tokens = 0

    def oauth_cb(_config: str) -> tuple[str, float, str]:
        nonlocal tokens
        tokens += 1
        return token_for("alice", lifetime_s=3), time.time() + 3, "alice"

    settings = {
        "bootstrap.servers": secured.sasl_ssl_bootstrap(),
        "security.protocol": "SASL_SSL",
        "ssl.ca.location": str(secured.ca_file),
        "sasl.mechanism": "OAUTHBEARER",
        "oauth_cb": oauth_cb,
    }
    assert produce_for(settings, unique_name("reauth-oauth"), RUN_S) > 100
    assert tokens >= 3
    assert max(logins_by_connection(secured, "alice").values()) >= 3
