"""A whole cluster on Kubernetes: install, topics, traffic, failover, scaling.

Needs a cluster with a default StorageClass and the odradek image (ODRADEK_E2E_IMAGE).
"""

from __future__ import annotations

import json
import textwrap
import uuid
from typing import Any

import pytest
from e2e_kubectl import Kubectl, wait_for

pytestmark = pytest.mark.slow


def cluster(replicas: int) -> dict[str, Any]:
    return {
        "apiVersion": "odradek.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": "events"},
        "spec": {
            "replicas": replicas,
            "rack": {},
            "storage": {"size": "1Gi"},
            "config": {
                "default.replication.factor": min(3, replicas),
                "min.insync.replicas": min(2, replicas),
            },
            "coordination": {"managed": {"replicas": 1}},
        },
    }


def topic(name: str, partitions: int, replicas: int = 3) -> dict[str, Any]:
    return {
        "apiVersion": "odradek.io/v1alpha1",
        "kind": "Topic",
        "metadata": {"name": name},
        "spec": {"cluster": "events", "partitions": partitions, "replicas": 3},
    }


def ready(kubectl: Kubectl, namespace: str, kind: str, name: str) -> bool:
    obj = kubectl.get(namespace, kind, name) or {}
    generation = obj.get("metadata", {}).get("generation")
    condition = kubectl.condition(namespace, kind, name, "Ready")
    return condition.get("status") == "True" and condition.get("observedGeneration") == generation


def wait_ready(
    kubectl: Kubectl, namespace: str, kind: str, name: str, timeout: float = 600
) -> None:
    wait_for(f"{kind} {name} Ready", lambda: ready(kubectl, namespace, kind, name), timeout)


def run_client(kubectl: Kubectl, namespace: str, image: str, script: str) -> str:
    """Run a Python snippet in a pod inside the cluster and return its output."""
    name = f"client-{uuid.uuid4().hex[:6]}"
    kubectl.run(
        "run",
        name,
        "-n",
        namespace,
        "--image",
        image,
        "--restart=Never",
        "--command",
        "--",
        "python3",
        "-c",
        textwrap.dedent(script),
    )
    wait_for(
        f"pod {name} to finish",
        lambda: (
            (kubectl.get(namespace, "pod", name) or {}).get("status", {}).get("phase")
            in ("Succeeded", "Failed")
        ),
        timeout=300,
    )
    return kubectl.run("logs", "-n", namespace, name)


PRODUCE_CONSUME = """
    import json
    from confluent_kafka import Consumer, Producer
    bootstrap = "events-bootstrap.{namespace}.svc:9092"
    producer = Producer({{"bootstrap.servers": bootstrap, "acks": "all"}})
    for i in range(100):
        producer.produce("orders", key=str(i), value=f"order-{{i}}")
    assert producer.flush(60) == 0
    consumer = Consumer({{"bootstrap.servers": bootstrap, "group.id": "e2e",
                          "auto.offset.reset": "earliest"}})
    consumer.subscribe(["orders"])
    seen = set()
    while len(seen) < 100:
        message = consumer.poll(30)
        assert message is not None, f"only {{len(seen)}} records came back"
        assert message.error() is None, message.error()
        seen.add(message.value().decode())
    print(json.dumps({{"consumed": len(seen)}}))
"""


def test_cluster_serves_traffic_survives_a_pod_loss_and_scales(
    kubectl: Kubectl, chart_operator: None, namespace: str, image: str
) -> None:
    kubectl.apply(namespace, cluster(3), topic("orders", 6))
    wait_ready(kubectl, namespace, "clusters.odradek.io", "events")
    wait_ready(kubectl, namespace, "topics.odradek.io", "orders", timeout=120)

    out = run_client(kubectl, namespace, image, PRODUCE_CONSUME.format(namespace=namespace))
    assert json.loads(out.strip().splitlines()[-1]) == {"consumed": 100}

    kubectl.run("delete", "pod", "-n", namespace, "events-broker-1", "--wait=false")
    wait_for(
        "broker 1 to be replaced",
        lambda: not ready(kubectl, namespace, "clusters.odradek.io", "events"),
        timeout=60,
        every=1,
    )
    wait_ready(kubectl, namespace, "clusters.odradek.io", "events")

    kubectl.run("scale", "-n", namespace, "clusters.odradek.io/events", "--replicas=5")
    wait_ready(kubectl, namespace, "clusters.odradek.io", "events")
    assert (kubectl.get(namespace, "statefulset", "events-broker") or {})["spec"]["replicas"] == 5

    kubectl.run("scale", "-n", namespace, "clusters.odradek.io/events", "--replicas=3")
    wait_ready(kubectl, namespace, "clusters.odradek.io", "events")
    assert (kubectl.get(namespace, "statefulset", "events-broker") or {})["spec"]["replicas"] == 3
    out = run_client(kubectl, namespace, image, PRODUCE_CONSUME.format(namespace=namespace))
    assert json.loads(out.strip().splitlines()[-1])["consumed"] == 100


def test_namespace_with_topics_is_deleted_after_its_cluster_without_hanging(
    kubectl: Kubectl, chart_operator: None, namespace: str
) -> None:
    kubectl.apply(namespace, cluster(1), topic("orders", 1, replicas=1))
    wait_for(
        "the topic finalizer",
        lambda: (
            (kubectl.get(namespace, "topics.odradek.io", "orders") or {})
            .get("metadata", {})
            .get("finalizers")
        ),
    )
    kubectl.run("delete", "clusters.odradek.io", "events", "-n", namespace)
    kubectl.run("delete", "namespace", namespace, "--timeout=120s")
