from __future__ import annotations

from typing import Any

import pytest
from crd_offline_validation import Invalid, validate_resource

from odradek.operator.models import ClusterSpec, MirrorMakerSpec, TopicSpec


def resource(kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "odradek.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": "example", "namespace": "default"},
        "spec": spec,
    }


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


def test_tls_cannot_be_turned_on_or_off_in_a_running_cluster() -> None:
    plain = resource("Cluster", {"listeners": [{"name": "PLAIN", "port": 9092}]})
    tls = resource(
        "Cluster",
        {
            "listeners": [
                {"name": "PLAIN", "port": 9092},
                {"name": "TLS", "port": 9093, "tls": True},
            ]
        },
    )
    for new, old in ((tls, plain), (plain, tls)):
        with pytest.raises(Invalid, match="TLS cannot be turned on or off in a running Cluster"):
            validate_resource(new, old=old)
    validate_resource(tls, old=tls)
    validate_resource(plain, old=plain)


@pytest.mark.parametrize(
    ("kind", "model", "spec"),
    [
        ("Cluster", ClusterSpec, {}),
        ("Topic", TopicSpec, {"cluster": "c"}),
        ("MirrorMaker", MirrorMakerSpec, MIRROR),
    ],
)
def test_schema_defaults_equal_model_defaults(kind: str, model: Any, spec: dict[str, Any]) -> None:
    defaulted = validate_resource(resource(kind, spec))["spec"]
    assert model.model_validate(defaulted).wire() == defaulted
    assert model.model_validate(spec).wire() == defaulted
