"""``ssl.client.auth=requested`` with ``ssl.principal.mapping.rules`` on a broker with the
authorizer on, judged by confluent-kafka: a client without a certificate is served as
User:ANONYMOUS, a client with one as the name the rules make of its certificate's subject."""

from __future__ import annotations

from pathlib import Path

import pytest
from broker_process import BrokerFactory, unique_name
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from secured_broker import SecuredBroker, secured_broker

pytestmark = pytest.mark.slow
TIMEOUT_S = 15


@pytest.fixture
def requested(broker_factory: BrokerFactory, tmp_path: Path) -> SecuredBroker:
    return secured_broker(
        broker_factory,
        tmp_path / "tls",
        {
            "listener.name.ssl.ssl.client.auth": "requested",
            # Kafka's syntax: the subject's CN, lower-cased ("Alice" -> "alice")
            "listener.name.ssl.ssl.principal.mapping.rules": (
                "RULE:^.*CN=([A-Za-z]+).*$/$1/L,DEFAULT"
            ),
            "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "super.users": "User:alice",
        },
    )


def ssl_settings(secured: SecuredBroker, common_name: str | None) -> dict[str, str]:
    settings = {
        "bootstrap.servers": secured.ssl_bootstrap(),
        "security.protocol": "SSL",
        "ssl.ca.location": str(secured.ca_file),
    }
    if common_name is not None:
        cert, key = secured.client_certificate(common_name)
        settings |= {"ssl.certificate.location": str(cert), "ssl.key.location": str(key)}
    return settings


def create_topic(settings: dict[str, str], topic: str) -> None:
    admin = AdminClient(settings)
    for future in admin.create_topics([NewTopic(topic, 1, 1)]).values():
        future.result(TIMEOUT_S)


def visible_topics(settings: dict[str, str]) -> set[str]:
    return set(AdminClient(settings).list_topics(timeout=TIMEOUT_S).topics)


def produce_error(settings: dict[str, str], topic: str) -> KafkaError | None:
    errors: list[KafkaError] = []
    producer = Producer(
        {**settings, "message.timeout.ms": "5000"},
    )
    producer.produce(topic, b"x", on_delivery=lambda error, _: errors.append(error))
    producer.flush(TIMEOUT_S)
    return errors[0] if errors else None


def test_requested_client_certificates_name_the_principal_through_the_mapping_rules(
    requested: SecuredBroker,
) -> None:
    alice = ssl_settings(requested, "Alice")
    topic = unique_name("mapped")
    create_topic(alice, topic)  # User:alice, a super user: allowed
    assert topic in visible_topics(alice)
    assert produce_error(alice, topic) is None

    for stranger in (ssl_settings(requested, None), ssl_settings(requested, "Bob")):
        # served (no certificate is no refusal), as User:ANONYMOUS or User:bob: no ACLs
        assert topic not in visible_topics(stranger)
        refused = produce_error(stranger, topic)
        assert refused is not None
        assert refused.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED, refused
        with pytest.raises(KafkaException, match="TOPIC_AUTHORIZATION_FAILED"):
            create_topic(stranger, unique_name("refused"))
