"""Changing a running Cluster on real pods, under acknowledged load: a config change rolls
the brokers one at a time, the controller last, never below min.insync.replicas; scaling
3 -> 4 -> 3 adds a broker on its own volume and drains it before the StatefulSet shrinks.
Nothing acknowledged is lost in either (real_pods.acknowledged_load)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from e2e_kubectl import Kubectl, wait_for
from real_node import RealCluster
from real_pods import (
    BOOTSTRAP,
    CLUSTER,
    NAMESPACE,
    acknowledged_load,
    create_topic,
    metadata,
    partitions_of,
    pod_ready,
    ready,
    run_client,
    wait_ready,
)

pytestmark = pytest.mark.slow

MIN_INSYNC_REPLICAS = 2
ROLL_TIMEOUT_S = 600
DESCRIBE_RETENTION = """
import sys
from confluent_kafka.admin import AdminClient, ConfigResource
admin = AdminClient({"bootstrap.servers": sys.argv[1]})
for broker in sys.argv[2:]:  # one broker per request, as Kafka requires
    [future] = admin.describe_configs([ConfigResource("broker", broker)]).values()
    print(broker, future.result()["log.retention.hours"].value)
"""


def broker_pods(kubectl: Kubectl) -> dict[str, dict[str, Any]]:
    selector = f"app.kubernetes.io/instance={CLUSTER},app.kubernetes.io/component=broker"
    found = kubectl.items(NAMESPACE, "pods", selector)
    return {pod["metadata"]["name"]: pod for pod in found}


def smallest_isr(cluster: RealCluster, topic: str) -> int | None:
    """The smallest ISR over the topic's partitions; None when no broker answered."""
    try:
        return min(len(p["isrs"]) for p in partitions_of(cluster, topic))
    except (AssertionError, subprocess.TimeoutExpired):
        return None


def patch_cluster(kubectl: Kubectl, spec: dict[str, Any]) -> None:
    patch = json.dumps({"spec": spec})
    kubectl.run("patch", "cluster", CLUSTER, "-n", NAMESPACE, "--type=merge", "-p", patch)


def test_a_config_change_rolls_the_brokers_one_at_a_time_under_load(
    real_cluster: RealCluster, events: str, tmp_path: Path
) -> None:
    kubectl = real_cluster.kubectl
    create_topic(real_cluster, "rolling", 12)
    controller = metadata(real_cluster)["controllerid"]
    before = {name: pod["metadata"]["uid"] for name, pod in broker_pods(kubectl).items()}
    restarted: list[str] = []
    fewest_ready, isr_low = len(before), len(before)

    def rolled() -> bool:
        """One sample of the roll: which pods are new, how many are ready, the ISRs."""
        nonlocal fewest_ready, isr_low
        pods = broker_pods(kubectl)
        fewest_ready = min(fewest_ready, sum(map(pod_ready, pods.values())))
        isr = smallest_isr(real_cluster, "rolling")
        isr_low = min(isr_low, isr) if isr is not None else isr_low
        for name, pod in sorted(pods.items()):
            if pod["metadata"]["uid"] != before.get(name) and name not in restarted:
                restarted.append(name)
        return len(restarted) == len(before) and ready(kubectl, "cluster", CLUSTER)

    with acknowledged_load(real_cluster, "rolling", 12, tmp_path) as load:
        time.sleep(3)
        patch_cluster(kubectl, {"config": {"log.retention.hours": 72}})
        wait_for("the roll to finish", rolled, ROLL_TIMEOUT_S, 0.5, real_cluster.report)
        time.sleep(3)
    assert load.acknowledged > 1000

    assert restarted[-1] == f"{CLUSTER}-broker-{controller}", restarted
    assert fewest_ready == len(before) - 1, "more than one broker was down at once"
    assert isr_low >= MIN_INSYNC_REPLICAS, f"an ISR fell to {isr_low}"
    retention = run_client(
        real_cluster, sys.executable, "-c", DESCRIBE_RETENTION, BOOTSTRAP, "0", "1", "2"
    )
    assert retention.split("\n")[:3] == ["0 72", "1 72", "2 72"]


def test_scaling_out_and_back_drains_the_leaving_broker_before_the_statefulset_shrinks(
    real_cluster: RealCluster, events: str, tmp_path: Path
) -> None:
    kubectl = real_cluster.kubectl
    kubectl.run("scale", "cluster", CLUSTER, "-n", NAMESPACE, "--replicas=4")
    wait_ready(real_cluster, "cluster", CLUSTER)
    assert sorted(b["id"] for b in metadata(real_cluster)["brokers"]) == [0, 1, 2, 3]
    zone_of = {node.name: node.zone for node in real_cluster.nodes}
    zones = [zone_of[pod["spec"]["nodeName"]] for pod in broker_pods(kubectl).values()]
    assert sorted(zones.count(zone) for zone in set(zones)) == [1, 1, 2]  # maxSkew 1

    create_topic(real_cluster, "scaling", 8)  # placed over all four brokers
    assert any(
        3 in [r["id"] for r in p["replicas"]] for p in partitions_of(real_cluster, "scaling")
    )

    with acknowledged_load(real_cluster, "scaling", 8, tmp_path) as load:
        time.sleep(3)
        kubectl.run("scale", "cluster", CLUSTER, "-n", NAMESPACE, "--replicas=3")
        wait_ready(real_cluster, "cluster", CLUSTER, timeout=ROLL_TIMEOUT_S)
        time.sleep(3)
    assert load.acknowledged > 500

    statefulset = kubectl.get(NAMESPACE, "statefulset", f"{CLUSTER}-broker")
    assert statefulset is not None and statefulset["spec"]["replicas"] == 3
    assert f"{CLUSTER}-broker-3" not in broker_pods(kubectl)
    assert sorted(b["id"] for b in metadata(real_cluster)["brokers"]) == [0, 1, 2]
    for topic in ("scaling", "rolling", "orders"):
        for partition in partitions_of(real_cluster, topic):
            assert 3 not in [r["id"] for r in partition["replicas"]], (topic, partition)
            assert len(partition["isrs"]) == 3, (topic, partition)
    draining = ("get", "events", "-n", NAMESPACE, "--field-selector", "reason=Draining")
    messages = [event["message"] for event in kubectl.json(*draining)["items"]]
    assert any("broker 3" in message for message in messages), messages
    assert kubectl.get(NAMESPACE, "pvc", f"data-{CLUSTER}-broker-3")  # deleteClaim: false
