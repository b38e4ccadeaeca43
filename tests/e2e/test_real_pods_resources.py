"""What the operator reports and refuses, and what deleting its resources does, on real
pods: a Topic's partitions grow, a decrease is refused and deleting the Topic deletes the
topic; a new Cluster reports its progress until Ready, refuses in status to scale below a
topic's replicas, its deletion garbage-collects everything it owns but the claims, and its
namespace is deleted without waiting on the finalizers of its Topics."""

from __future__ import annotations

import json
from typing import Any

import pytest
from e2e_kubectl import Kubectl, new_namespace, wait_for
from real_node import RealCluster
from real_pods import (
    NAMESPACE,
    create_topic,
    metadata,
    partitions_of,
    ready,
    small_cluster,
    wait_ready,
)

pytestmark = pytest.mark.slow

TOPIC = "resizable"
SMALL = "small"
GC_TIMEOUT_S = 180


def patch(kubectl: Kubectl, kind: str, name: str, spec: dict[str, Any], namespace: str) -> None:
    body = json.dumps({"spec": spec})
    kubectl.run("patch", kind, name, "-n", namespace, "--type=merge", "-p", body)


def condition_where(
    cluster: RealCluster, kind: str, name: str, type_: str, status: str, namespace: str
) -> dict[str, Any]:
    """The resource's ``type_`` condition once it has ``status`` for its current generation."""

    def matching() -> dict[str, Any] | None:
        found = cluster.kubectl.get(namespace, kind, name) or {}
        condition = cluster.kubectl.condition(namespace, kind, name, type_)
        generation = found.get("metadata", {}).get("generation")
        current = condition.get("observedGeneration") == generation
        return condition if current and condition.get("status") == status else None

    return wait_for(f"{kind} {name} {type_} {status}", matching, 120, 0.5, cluster.report)


def topic_names(cluster: RealCluster) -> set[str]:
    return {topic["topic"] for topic in metadata(cluster)["topics"]}


def test_a_topic_grows_refuses_to_shrink_and_goes_with_its_resource(
    real_cluster: RealCluster, events: str
) -> None:
    kubectl = real_cluster.kubectl
    create_topic(real_cluster, TOPIC, 3)
    found = kubectl.get(NAMESPACE, "topic", TOPIC)
    assert found is not None and found["metadata"]["finalizers"] == ["odradek.io/topic"]
    assert (found["status"]["partitions"], found["status"]["replicas"]) == (3, 3)
    assert found["status"]["topicId"]
    assert len(partitions_of(real_cluster, TOPIC)) == 3

    patch(kubectl, "topic", TOPIC, {"partitions": 5}, NAMESPACE)
    wait_ready(real_cluster, "topic", TOPIC, timeout=120)
    assert len(partitions_of(real_cluster, TOPIC)) == 5

    patch(kubectl, "topic", TOPIC, {"partitions": 2}, NAMESPACE)
    refused = condition_where(real_cluster, "topic", TOPIC, "Ready", "False", NAMESPACE)
    assert refused["reason"] == "ChangeRefused"
    assert refused["message"] == "partitions cannot decrease from 5 to 2; the topic keeps 5"
    assert len(partitions_of(real_cluster, TOPIC)) == 5

    kubectl.run("delete", "topic", TOPIC, "-n", NAMESPACE, "--timeout=60s")
    gone = lambda: TOPIC not in topic_names(real_cluster)  # noqa: E731
    wait_for(f"{TOPIC} gone from the brokers", gone, 60, 1)


OWNED = [
    ("serviceaccount", f"{SMALL}-broker"),
    ("configmap", f"{SMALL}-config"),
    ("service", f"{SMALL}-brokers"),
    ("service", f"{SMALL}-bootstrap"),
    ("service", f"{SMALL}-etcd"),
    ("statefulset", f"{SMALL}-broker"),
    ("statefulset", f"{SMALL}-etcd"),
    ("poddisruptionbudget", f"{SMALL}-broker"),
    ("poddisruptionbudget", f"{SMALL}-etcd"),
]


def test_a_new_cluster_reports_progress_refuses_a_scale_down_and_its_deletion_keeps_the_claims(
    real_cluster: RealCluster, operator_pod: None
) -> None:
    kubectl = real_cluster.kubectl
    namespace = new_namespace(kubectl)
    single = {
        "default.replication.factor": 1,
        "min.insync.replicas": 1,
        "offsets.topic.replication.factor": 1,
    }
    try:
        cluster = small_cluster(SMALL, brokers=2, config=single)
        kubectl.apply(namespace, cluster)
        waiting = condition_where(real_cluster, "cluster", SMALL, "Ready", "False", namespace)
        assert waiting["reason"] == "BrokersNotReady", waiting
        assert waiting["message"].endswith("of 2 brokers ready"), waiting
        assert kubectl.condition(namespace, "cluster", SMALL, "Progressing")["status"] == "True"

        wait_for(
            f"cluster {SMALL} Ready",
            lambda: ready(kubectl, "cluster", SMALL, namespace),
            240,
            1,
            real_cluster.report,
        )
        resource = kubectl.get(namespace, "cluster", SMALL)
        assert resource is not None
        status = resource["status"]
        assert status["bootstrapServers"] == f"{SMALL}-bootstrap.{namespace}.svc:9092"
        assert [(b["id"], b["ready"]) for b in status["brokers"]] == [(0, True), (1, True)]
        ready_condition = kubectl.condition(namespace, "cluster", SMALL, "Ready")
        assert ready_condition["message"] == "2 brokers ready, all partitions in sync"
        assert kubectl.condition(namespace, "cluster", SMALL, "Progressing")["status"] == "False"
        uid = resource["metadata"]["uid"]
        for kind, name in OWNED:
            owned = kubectl.get(namespace, kind, name)
            assert owned is not None, f"{kind} {name}"
            [owner] = owned["metadata"]["ownerReferences"]
            assert (owner["kind"], owner["uid"], owner.get("controller")) == ("Cluster", uid, True)

        topic = {
            "apiVersion": "odradek.io/v1alpha1",
            "kind": "Topic",
            "metadata": {"name": "kept-back"},
            "spec": {"cluster": SMALL, "partitions": 1, "replicas": 2},
        }
        kubectl.apply(namespace, topic)
        wait_for("topic kept-back Ready", lambda: ready(kubectl, "topic", "kept-back", namespace))

        # scaling below the topic's replicas is refused: the StatefulSet keeps both brokers
        scale = ("scale", "cluster", SMALL, "-n", namespace)
        kubectl.run(*scale, "--replicas=1")
        degraded = condition_where(real_cluster, "cluster", SMALL, "Degraded", "True", namespace)
        assert degraded["reason"] == "ScaleDownRefused"
        assert "need 2 replicas; lower their replicas first" in degraded["message"]
        statefulset = kubectl.get(namespace, "statefulset", f"{SMALL}-broker")
        assert statefulset is not None and statefulset["spec"]["replicas"] == 2
        scaled = kubectl.json("get", "cluster", SMALL, "-n", namespace, "--subresource=scale")
        assert (scaled["spec"]["replicas"], scaled["status"]["replicas"]) == (1, 2)
        kubectl.run(*scale, "--replicas=2")
        condition_where(real_cluster, "cluster", SMALL, "Degraded", "False", namespace)

        kubectl.run("delete", "cluster", SMALL, "-n", namespace)

        def collected() -> bool:
            left = [o for o in OWNED if kubectl.get(namespace, *o)]
            return not left and not kubectl.items(namespace, "pods")

        wait_for("the Cluster's objects and pods to go", collected, GC_TIMEOUT_S, 2)
        for broker in (0, 1):
            assert kubectl.get(namespace, "persistentvolumeclaim", f"data-{SMALL}-broker-{broker}")
        binding = f"odradek-{namespace}-{SMALL}-node-reader"
        assert "NotFound" in kubectl.run("get", "clusterrolebinding", binding, check=False)

        # the Topic's finalizer does not hold the namespace: its cluster is gone
        kubectl.run("delete", "namespace", namespace, "--timeout=120s")
        assert "NotFound" in kubectl.run("get", "namespace", namespace, check=False)
    finally:
        kubectl.run("delete", "namespace", namespace, "--wait=false", check=False)
