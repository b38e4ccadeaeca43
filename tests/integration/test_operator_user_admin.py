"""The operator's admin requests for a User against a real broker with the authorizer on:
a SCRAM credential, ACL bindings and quotas are applied, seen as they were applied, and
decide what a real client may do; removing them revokes the client."""

from __future__ import annotations

from pathlib import Path

import pytest
from broker_process import BrokerFactory, unique_name
from confluent_kafka import KafkaError, KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from secured_broker import secured_broker

from odradek.operator.handlers.confluent_admin import ConfluentAdmin
from odradek.operator.models import UserSpec
from odradek.operator.planning.user_access import acl_changes, desired_acls, principal

AUTHORIZER = {
    "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
    "super.users": "User:ANONYMOUS",  # the admin connects on the plaintext listener
}
SPEC = UserSpec.model_validate(
    {
        "cluster": "events",
        "authentication": {"type": "scram-sha-512"},
        "authorization": {
            "acls": [
                {
                    "resource": {"type": "topic", "name": "orders-", "patternType": "prefix"},
                    "operations": ["Write", "Describe"],
                }
            ]
        },
        "quotas": {"producerByteRate": 1048576, "requestPercentage": 50},
    }
)


def produce(bootstrap: str, user: str, password: str, topic: str) -> KafkaError | None:
    """The error of producing one record as ``user`` over SASL_PLAINTEXT, or None."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.username": user,
            "sasl.password": password,
            "message.timeout.ms": 8000,
        }
    )
    errors: list[KafkaError | None] = []
    producer.produce(topic, b"v", on_delivery=lambda error, _: errors.append(error))
    producer.flush(15)
    return errors[0] if errors else KafkaError(KafkaError._MSG_TIMED_OUT)


@pytest.mark.timeout(120)
def test_a_users_credential_acls_and_quotas_decide_what_its_client_may_do(
    broker_factory: BrokerFactory, tmp_path: Path
) -> None:
    secured = secured_broker(broker_factory, tmp_path / "tls", AUTHORIZER)
    bootstrap = secured.broker.bootstrap
    topics = ["orders-1", "payments"]
    creator = AdminClient({"bootstrap.servers": bootstrap})
    created = creator.create_topics(
        [NewTopic(t, num_partitions=1, replication_factor=1) for t in topics]
    )
    for future in created.values():
        future.result(15)
    admin = ConfluentAdmin(bootstrap)
    user = unique_name("app")
    sasl = secured.sasl_plaintext_bootstrap()

    assert admin.scram_mechanisms(user) == frozenset()
    admin.set_scram_password(user, "SCRAM-SHA-512", "first-password")
    assert admin.scram_mechanisms(user) == {"SCRAM-SHA-512"}
    wanted = desired_acls(user, SPEC)
    changes = acl_changes(wanted, admin.acls(principal(user)))
    assert changes.delete == () and len(changes.create) == 2
    admin.create_acls(changes.create)
    assert admin.acls(principal(user)) == wanted
    admin.alter_user_quotas(user, {"producer_byte_rate": 1048576.0, "request_percentage": 50.0})
    assert admin.user_quotas(user) == {"producer_byte_rate": 1048576.0, "request_percentage": 50.0}

    assert produce(sasl, user, "first-password", "orders-1") is None
    denied = produce(sasl, user, "first-password", "payments")
    assert denied is not None and denied.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED

    admin.set_scram_password(user, "SCRAM-SHA-512", "second-password")  # a new password
    failed = produce(sasl, user, "first-password", "orders-1")
    assert failed is not None and failed.code() != KafkaError.NO_ERROR
    assert produce(sasl, user, "second-password", "orders-1") is None

    admin.delete_acls(admin.acls(principal(user)))
    assert admin.acls(principal(user)) == frozenset()
    denied = produce(sasl, user, "second-password", "orders-1")
    assert denied is not None and denied.code() == KafkaError.TOPIC_AUTHORIZATION_FAILED
    admin.alter_user_quotas(user, dict.fromkeys(admin.user_quotas(user)))
    assert admin.user_quotas(user) == {}
    admin.delete_scram(user, admin.scram_mechanisms(user))
    assert admin.scram_mechanisms(user) == frozenset()
    with pytest.raises(KafkaException):
        Producer(
            {
                "bootstrap.servers": sasl,
                "security.protocol": "SASL_PLAINTEXT",
                "sasl.mechanism": "SCRAM-SHA-512",
                "sasl.username": user,
                "sasl.password": "second-password",
            }
        ).list_topics(timeout=5)
