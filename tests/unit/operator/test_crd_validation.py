from __future__ import annotations

from typing import Any

import pytest
from crd_offline_validation import Invalid, validate_resource

from odradek.operator.models import ClusterSpec, MirrorMakerSpec, TopicSpec, UserSpec


def resource(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "odradek.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": "example", "namespace": "default"},
        "spec": spec,
    }


USER = {"cluster": "c", "authentication": {"type": "scram-sha-512"}}
MIRROR = {"source": {"alias": "a", "cluster": "a"}, "target": {"alias": "b", "cluster": "b"}}

REJECTED = [
    ("Topic", {"cluster": "c", "partitions": -1}, "minimum of 1"),
    ("Topic", {"cluster": "c", "partitions": 0}, "minimum of 1"),
    ("Topic", {"partitions": 3}, "'cluster' is a required property"),
    ("Topic", {"cluster": "c", "topicName": "bad name!"}, "does not match"),
    (
        "Topic",
        {"cluster": "c", "replicas": 2, "config": {"min.insync.replicas": 3}},
        "min.insync.replicas cannot exceed replicas",
    ),
    ("Cluster", {"storage": {"type": "tape"}}, "'tape' is not one of"),
    ("Cluster", {"replicas": 0}, "minimum of 1"),
    ("Cluster", {"storage": {"size": "ten gigs"}}, "does not match"),
    (
        "Cluster",
        {"storage": {"type": "ephemeral", "storageClassName": "fast"}},
        "storageClassName applies only to persistent-claim storage",
    ),
    (
        "Cluster",
        {"replicas": 2, "config": {"default.replication.factor": 3}},
        "default.replication.factor cannot exceed replicas",
    ),
    (
        "Cluster",
        {"replicas": 1, "config": {"min.insync.replicas": "2"}},
        "min.insync.replicas cannot exceed replicas",
    ),
    ("Cluster", {"config": {"node.id": 7}}, "config cannot set node.id.*the operator sets them"),
    ("Cluster", {"coordination": {}}, "set exactly one of coordination.managed"),
    ("Cluster", {"coordination": {"managed": {"replicas": 2}}}, "2 is not one of"),
    ("Cluster", {"coordination": {"external": {"endpoints": ["etcd:2379"]}}}, "does not match"),
    ("Cluster", {"listeners": [{"name": "plain", "port": 9092}]}, "does not match"),
    (
        "Cluster",
        {"listeners": [{"name": "A", "port": 9092}, {"name": "A", "port": 9093}]},
        "listener names must be unique",
    ),
    (
        "Cluster",
        {"listeners": [{"name": "A", "port": 9092}, {"name": "B", "port": 9092}]},
        "listener ports must be unique",
    ),
    ("Cluster", {"listeners": [{"name": "REPLICATION"}]}, "REPLICATION is the operator's own"),
    ("Cluster", {"listeners": [{"name": "A", "port": 9091}]}, "ports 9091 and 9080 are the op"),
    (
        "Cluster",
        {"clusterCa": {"validityDays": 30, "renewalDays": 16}},
        "renewalDays must be at most half of validityDays",
    ),
    (
        "Cluster",
        {"listeners": [{"name": "A", "authentication": {"type": "tls"}}]},
        "authentication type tls needs tls: true",
    ),
    (
        "Cluster",
        {"listeners": [{"name": "A", "authentication": {"type": "basic"}}]},
        "'basic' is not one of",
    ),
    ("Cluster", {"authorization": {"superUsers": ["admin"]}}, "does not match"),
    ("User", {"authentication": {"type": "tls"}}, "'cluster' is a required property"),
    (
        "Cluster",
        {"listeners": [{"name": "A", "authentication": {"type": "oauth"}}]},
        "jwksEndpointUri is required for, and only for, type oauth",
    ),
    (
        "Cluster",
        {
            "listeners": [
                {"name": "A", "authentication": {"type": "scram-sha-512", "audience": ["k"]}}
            ]
        },
        "validIssuerUri, audience and userNameClaim apply only to type oauth",
    ),
    (
        "Cluster",
        {
            "listeners": [
                {"name": "A", "authentication": {"type": "oauth", "jwksEndpointUri": "ldap://x"}}
            ]
        },
        "does not match",
    ),
    (
        "User",
        {
            "cluster": "c",
            "authentication": {
                "type": "tls",
                "password": {"valueFrom": {"secretKeyRef": {"name": "s", "key": "k"}}},
            },
        },
        "password applies only to scram-sha-512 and scram-sha-256",
    ),
    (
        "User",
        {
            **USER,
            "authorization": {"acls": [{"resource": {"type": "topic"}, "operations": ["Read"]}]},
        },
        "name is required for topic, group and transactionalId",
    ),
    (
        "User",
        {
            **USER,
            "authorization": {
                "acls": [{"resource": {"type": "cluster", "name": "x"}, "operations": ["Alter"]}]
            },
        },
        "the cluster resource has no name",
    ),
    (
        "User",
        {
            **USER,
            "authorization": {
                "acls": [{"resource": {"type": "topic", "name": "t"}, "operations": ["Eat"]}]
            },
        },
        "'Eat' is not one of",
    ),
    ("User", {**USER, "quotas": {"producerByteRate": 0}}, "minimum of 1"),
    ("MirrorMaker", {**MIRROR, "naming": "suffix"}, "'suffix' is not one of"),
    (
        "MirrorMaker",
        {**MIRROR, "target": {"alias": "a", "cluster": "b"}},
        "source and target need different aliases",
    ),
    (
        "MirrorMaker",
        {**MIRROR, "source": {"alias": "a"}},
        "set exactly one of cluster and bootstrapServers",
    ),
    ("MirrorMaker", {**MIRROR, "replicas": -1}, "minimum of 0"),
    (
        "MirrorMaker",
        {**MIRROR, "target": {"alias": "b", "bootstrapServers": "b:9092", "listener": "TLS"}},
        "listener names a listener of the Cluster: set cluster",
    ),
]


@pytest.mark.parametrize(("kind", "spec", "message"), REJECTED)
def test_schema_rejects_invalid_resource_with_clear_message(
    kind: str, spec: dict[str, Any], message: str
) -> None:
    with pytest.raises(Invalid, match=message):
        validate_resource(resource(kind, spec))


def test_topic_name_cannot_change_once_set() -> None:
    old = resource("Topic", {"cluster": "c", "topicName": "orders"})
    new = resource("Topic", {"cluster": "c", "topicName": "payments"})
    with pytest.raises(Invalid, match="topicName cannot be changed"):
        validate_resource(new, old=old)
    validate_resource(old, old=old)


SECURED = [
    {"listeners": [{"name": "PLAIN", "port": 9092}, {"name": "TLS", "port": 9093, "tls": True}]},
    {"listeners": [{"name": "SCRAM", "authentication": {"type": "scram-sha-512"}}]},
    {"authorization": {"superUsers": ["User:admin"]}},
]


@pytest.mark.parametrize("secured", SECURED)
def test_security_cannot_be_turned_on_or_off_in_a_running_cluster(secured: dict[str, Any]) -> None:
    plain = resource("Cluster", {"listeners": [{"name": "PLAIN", "port": 9092}]})
    secure = resource("Cluster", secured)
    for new, old in ((secure, plain), (plain, secure)):
        with pytest.raises(Invalid, match="TLS, authentication and authorization cannot be turn"):
            validate_resource(new, old=old)
    validate_resource(secure, old=secure)
    validate_resource(plain, old=plain)
    other = resource("Cluster", {**secured, "authorization": {}})  # secured either way
    validate_resource(other, old=secure)


@pytest.mark.parametrize(
    ("kind", "model", "spec"),
    [
        ("Cluster", ClusterSpec, {}),
        ("Topic", TopicSpec, {"cluster": "c"}),
        ("MirrorMaker", MirrorMakerSpec, MIRROR),
        ("User", UserSpec, USER),
    ],
)
def test_schema_defaults_equal_model_defaults(kind: str, model: Any, spec: dict[str, Any]) -> None:
    defaulted = validate_resource(resource(kind, spec))["spec"]
    assert model.model_validate(defaulted).wire() == defaulted
    assert model.model_validate(spec).wire() == defaulted
