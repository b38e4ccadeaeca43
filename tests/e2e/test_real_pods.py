"""The operator and its clusters on real pods: containers from the built images, run by
kubelets on containerd, scheduled over three zones, on local volumes, named by CoreDNS
and reached through kube-proxy (real_node.py). Nothing here plays the kubelet.

The chart is installed with helm as a user would; the example Cluster and Topics from
manifests/examples/ are applied unchanged but for the etcd image (the default,
quay.io/coreos/etcd, cannot be pulled here; the tests run the same etcd version from a
local image). Clients run on the host with the cluster's DNS as their resolver, so they
reach the brokers by the names the brokers advertise.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from e2e_kubectl import Kubectl, wait_for
from real_node import RealCluster
from test_cluster_failover import PRODUCERS, producer_processes

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/unit/operator"))
from helm_binary import HOW, find_helm  # noqa: E402

pytestmark = pytest.mark.slow

OPERATOR_NAMESPACE = "odradek-system"
CLUSTER = "events"
NAMESPACE = "default"
BOOTSTRAP = f"{CLUSTER}-bootstrap.{NAMESPACE}.svc:9092"
LOCAL_ETCD_IMAGE = "odradek.local/etcd:v3.5.17"
VERDICT_SCRIPT = ROOT / "tests/e2e/durability_verdict.py"
LOAD_TOPIC = "orders"
LOAD_PARTITIONS = 12
READY_TIMEOUT_S = 240


def example(name: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all((ROOT / "manifests/examples" / name).read_text())]


def run_client(cluster: RealCluster, *argv: str, timeout: float = 120) -> str:
    """stdout of a client run on the host with the cluster's DNS; fails on a non-zero exit."""
    result = subprocess.run(
        cluster.client_argv(argv), capture_output=True, text=True, check=False, timeout=timeout
    )
    assert result.returncode == 0, f"{argv[0]} exited {result.returncode}: {result.stderr}"
    return result.stdout


def metadata(cluster: RealCluster) -> dict[str, Any]:
    out = run_client(cluster, "kcat", "-b", BOOTSTRAP, "-L", "-J", "-m", "10")
    return dict(json.loads(out))


def fully_in_sync(cluster: RealCluster, topic: str) -> bool:
    [found] = [t for t in metadata(cluster)["topics"] if t["topic"] == topic]
    return all(len(p["isrs"]) == len(p["replicas"]) for p in found["partitions"])


def ready(kubectl: Kubectl, kind: str, name: str) -> bool:
    return kubectl.condition(NAMESPACE, kind, name, "Ready").get("status") == "True"


@pytest.fixture(scope="module")
def operator_pod(real_cluster: RealCluster) -> Iterator[None]:
    """The chart installed with helm (its default image, the one images/build.sh built)."""
    helm = find_helm()
    if helm is None:
        pytest.fail(HOW)
    command = [
        helm, "upgrade", "--install", "odradek", str(ROOT / "charts/odradek"),
        "--kubeconfig", str(real_cluster.plane.kubeconfig), "--namespace", OPERATOR_NAMESPACE,
        "--create-namespace", "--wait", "--timeout", "3m",
    ]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True, timeout=240)
    yield


@pytest.fixture(scope="module")
def events(real_cluster: RealCluster, operator_pod: None) -> str:
    """The example Cluster and its Topics, Ready; the Cluster's name."""
    kubectl = real_cluster.kubectl
    [cluster] = example("cluster.yaml")
    cluster["spec"]["coordination"]["managed"]["image"] = LOCAL_ETCD_IMAGE
    kubectl.apply(NAMESPACE, cluster)
    is_ready = functools.partial(ready, kubectl, "cluster", CLUSTER)
    wait_for("the Cluster Ready", is_ready, READY_TIMEOUT_S, 2, real_cluster.report)
    kubectl.apply(NAMESPACE, *example("topics.yaml"))
    for topic in example("topics.yaml"):
        name = topic["metadata"]["name"]
        is_ready = functools.partial(ready, kubectl, "topic", name)
        wait_for(f"Topic {name} Ready", is_ready, 120, 1, real_cluster.report)
    return CLUSTER


def test_helm_runs_the_operator_as_a_pod_from_the_built_image(
    real_cluster: RealCluster, operator_pod: None
) -> None:
    kubectl = real_cluster.kubectl
    [pod] = kubectl.items(OPERATOR_NAMESPACE, "pods", "app.kubernetes.io/name=odradek")
    [container] = pod["status"]["containerStatuses"]
    assert container["ready"] and "running" in container["state"]
    assert container["image"].startswith("ghcr.io/odradek/odradek:")
    assert pod["spec"]["nodeName"] in {node.name for node in real_cluster.nodes}
    log = kubectl.run("logs", "-n", OPERATOR_NAMESPACE, pod["metadata"]["name"])
    assert "Initial authentication has finished" in log


def test_the_example_cluster_runs_on_pods_spread_over_zones_and_serves_clients(
    real_cluster: RealCluster, events: str
) -> None:
    kubectl = real_cluster.kubectl
    zone_of = {node.name: node.zone for node in real_cluster.nodes}
    for component in ("broker", "etcd"):
        pods = kubectl.items(NAMESPACE, "pods", f"app.kubernetes.io/component={component}")
        assert len(pods) == 3
        assert {zone_of[pod["spec"]["nodeName"]] for pod in pods} == set(zone_of.values())
        for pod in pods:
            assert all(status["ready"] for status in pod["status"]["containerStatuses"])
    claims = kubectl.items(NAMESPACE, "persistentvolumeclaims")
    assert len(claims) == 6 and all(c["status"]["phase"] == "Bound" for c in claims)

    brokers = sorted((b["id"], b["name"]) for b in metadata(real_cluster)["brokers"])
    assert brokers == [
        (i, f"{CLUSTER}-broker-{i}.{CLUSTER}-brokers.default.svc:9092") for i in range(3)
    ]

    topics = {t["topic"]: len(t["partitions"]) for t in metadata(real_cluster)["topics"]}
    assert topics["orders"] == 12 and topics["customer.profiles"] == 6

    # the compacted topic: every record keyed
    records = "\n".join(f"customer-{i}:profile-{i}" for i in range(100))
    produce = ["kcat", "-b", BOOTSTRAP, "-P", "-t", "customer.profiles", "-p", "0", "-K", ":"]
    produce += ["-X", "acks=all"]
    subprocess.run(
        real_cluster.client_argv(produce), input=records, text=True, check=True, timeout=60
    )
    consumed = run_client(
        real_cluster,
        "kcat", "-b", BOOTSTRAP, "-C", "-t", "customer.profiles", "-p", "0", "-o", "beginning",
        "-c", "100", "-e", "-f", "%k:%s\n",
    )  # fmt: skip
    assert consumed.split() == records.split()


def test_a_deleted_broker_pod_returns_on_its_volume_and_loses_no_acknowledged_record(
    real_cluster: RealCluster, events: str, tmp_path: Path
) -> None:
    kubectl = real_cluster.kubectl
    victim = f"{CLUSTER}-broker-1"
    before = kubectl.get(NAMESPACE, "pod", victim)
    assert before is not None
    claim = f"data-{victim}"
    volume = kubectl.get(NAMESPACE, "pvc", claim)
    assert volume is not None

    launch = real_cluster.client_argv
    load = producer_processes(BOOTSTRAP, LOAD_TOPIC, tmp_path, None, LOAD_PARTITIONS, launch)
    with load as producers:
        time.sleep(5)
        kubectl.run("delete", "pod", victim, "-n", NAMESPACE, "--wait=false")

        def back() -> bool:
            pod = kubectl.get(NAMESPACE, "pod", victim)
            if pod is None or pod["metadata"]["uid"] == before["metadata"]["uid"]:
                return False
            statuses = pod["status"].get("containerStatuses") or []
            return bool(statuses) and all(status["ready"] for status in statuses)

        wait_for(f"{victim} recreated and ready", back, READY_TIMEOUT_S, 1, real_cluster.report)
        in_sync = functools.partial(fully_in_sync, real_cluster, LOAD_TOPIC)
        wait_for("every replica back in sync", in_sync, 120, 2, real_cluster.report)
        time.sleep(5)
        assert all(p.poll() is None for p in producers), "a producer died under the restart"

    after = kubectl.get(NAMESPACE, "pvc", claim)
    assert after is not None and after["spec"]["volumeName"] == volume["spec"]["volumeName"]
    reports = [f"{name}={tmp_path / f'{name}.report'}" for name in PRODUCERS]
    verdict = run_client(
        real_cluster, sys.executable, str(VERDICT_SCRIPT), "--bootstrap", BOOTSTRAP,
        "--topic", LOAD_TOPIC, "--partitions", str(LOAD_PARTITIONS), *reports,
    )  # fmt: skip
    assert verdict.startswith("durable: ")
    acknowledged = int(verdict.split()[3])
    assert acknowledged > 1000
