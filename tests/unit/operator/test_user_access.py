"""The listener a User's clients use, its ACL rules and quotas as Kafka names them, and the
changes that get a cluster there."""

from __future__ import annotations

from typing import Any

from odradek.operator.models import ClusterSpec, UserSpec
from odradek.operator.planning.user_access import (
    AclBinding,
    acl_changes,
    desired_acls,
    quota_changes,
    user_listener,
)

SCRAM = {"type": "scram-sha-512"}


def user(acls: list[dict[str, Any]]) -> UserSpec:
    return UserSpec.model_validate(
        {"cluster": "c", "authentication": SCRAM, "authorization": {"acls": acls}}
    )


def binding(resource: str, name: str, pattern: str, operation: str) -> AclBinding:
    return AclBinding(resource, name, pattern, "User:app", "*", operation, "ALLOW")


def test_each_operation_of_a_rule_is_one_binding_in_kafkas_names() -> None:
    spec = user(
        [
            {
                "resource": {"type": "topic", "name": "orders-", "patternType": "prefix"},
                "operations": ["Write", "Describe"],
            },
            {"resource": {"type": "transactionalId", "name": "tx"}, "operations": ["Write"]},
            {"resource": {"type": "cluster"}, "operations": ["IdempotentWrite"]},
            {
                "resource": {"type": "group", "name": "*"},
                "operations": ["Read"],
                "type": "deny",
                "host": "10.0.0.1",
            },
        ]
    )
    assert desired_acls("app", spec) == {
        binding("TOPIC", "orders-", "PREFIXED", "WRITE"),
        binding("TOPIC", "orders-", "PREFIXED", "DESCRIBE"),
        binding("TRANSACTIONAL_ID", "tx", "LITERAL", "WRITE"),
        binding("CLUSTER", "kafka-cluster", "LITERAL", "IDEMPOTENT_WRITE"),
        AclBinding("GROUP", "*", "LITERAL", "User:app", "10.0.0.1", "READ", "DENY"),
    }


def test_a_user_without_authorization_has_no_acls() -> None:
    spec = UserSpec.model_validate({"cluster": "c", "authentication": SCRAM})
    assert desired_acls("app", spec) == frozenset()


def test_acl_changes_create_the_missing_and_delete_the_unasked_only() -> None:
    kept = binding("TOPIC", "a", "LITERAL", "READ")
    new = binding("TOPIC", "b", "LITERAL", "READ")
    stale = binding("TOPIC", "c", "LITERAL", "WRITE")
    changes = acl_changes({kept, new}, {kept, stale})
    assert changes.create == (new,)
    assert changes.delete == (stale,)
    assert acl_changes({kept}, {kept}) == acl_changes((), ())


def test_quota_changes_set_the_different_and_remove_the_unasked() -> None:
    desired = {"producer_byte_rate": 1024.0, "consumer_byte_rate": 2048.0}
    observed = {"producer_byte_rate": 1024.0, "consumer_byte_rate": 1.0, "request_percentage": 5.0}
    assert quota_changes(desired, observed) == {
        "consumer_byte_rate": 2048.0,
        "request_percentage": None,
    }
    assert quota_changes({}, {}) == {}


def test_quotas_by_kafkas_names() -> None:
    spec = UserSpec.model_validate(
        {
            "cluster": "c",
            "authentication": SCRAM,
            "quotas": {"producerByteRate": 1048576, "requestPercentage": 55.5},
        }
    )
    assert spec.quotas is not None
    assert spec.quotas.kafka() == {"producer_byte_rate": 1048576.0, "request_percentage": 55.5}


def test_a_user_connects_to_the_first_listener_taking_its_credential() -> None:
    listeners = [
        {"name": "PASSWORDS", "port": 9095, "tls": True, "authentication": {"type": "plain"}},
        {"name": "MTLS", "port": 9093, "tls": True, "authentication": {"type": "tls"}},
        {"name": "SCRAM", "port": 9092, "authentication": {"type": "scram-sha-512"}},
        {"name": "SCRAM2", "port": 9094, "authentication": {"type": "scram-sha-512"}},
    ]
    cluster = ClusterSpec.model_validate({"listeners": listeners})

    def chosen(authentication: str) -> str | None:
        listener = user_listener(cluster, authentication)
        return None if listener is None else listener.name

    assert chosen("scram-sha-512") == "SCRAM"
    assert chosen("scram-sha-256") == "PASSWORDS"  # PLAIN takes any SCRAM password
    assert chosen("tls") == "MTLS"
    assert user_listener(ClusterSpec.model_validate({}), "tls") is None
