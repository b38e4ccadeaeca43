"""What the tests on real pods share: the chart installed with helm, the example Cluster
and Topics from manifests/examples/, clients run on the host through the cluster's DNS,
and acknowledged load whose durability is checked once it stops.

The example is applied unchanged but for the etcd image (the default, quay.io/coreos/etcd,
cannot be pulled here; the tests run the same etcd version from a local image).
"""

from __future__ import annotations

import contextlib
import functools
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from e2e_kubectl import Kubectl, wait_for
from real_node import RealCluster
from test_cluster_failover import PRODUCERS, producer_processes

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests/unit/operator"))
from helm_binary import HOW, find_helm  # noqa: E402

OPERATOR_NAMESPACE = "odradek-system"
CLUSTER = "events"
NAMESPACE = "default"
BOOTSTRAP = f"{CLUSTER}-bootstrap.{NAMESPACE}.svc:9092"
LOCAL_ETCD_IMAGE = "odradek.local/etcd:v3.5.17"
VERDICT_SCRIPT = ROOT / "tests/e2e/durability_verdict.py"
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


def metadata(cluster: RealCluster, bootstrap: str = BOOTSTRAP) -> dict[str, Any]:
    out = run_client(cluster, "kcat", "-b", bootstrap, "-L", "-J", "-m", "10")
    return dict(json.loads(out))


def partitions_of(cluster: RealCluster, topic: str) -> list[dict[str, Any]]:
    [found] = [t for t in metadata(cluster)["topics"] if t["topic"] == topic]
    return list(found["partitions"])


def fully_in_sync(cluster: RealCluster, topic: str) -> bool:
    return all(len(p["isrs"]) == len(p["replicas"]) for p in partitions_of(cluster, topic))


def pod_ready(pod: dict[str, Any]) -> bool:
    statuses = pod.get("status", {}).get("containerStatuses") or []
    return bool(statuses) and all(status["ready"] for status in statuses)


def ready_pods(kubectl: Kubectl, selector: str) -> list[dict[str, Any]] | None:
    """The pods of ``NAMESPACE`` matching ``selector``, when every one is ready."""
    pods = kubectl.items(NAMESPACE, "pods", selector)
    return pods if pods and all(map(pod_ready, pods)) else None


def ready(kubectl: Kubectl, kind: str, name: str, namespace: str = NAMESPACE) -> bool:
    """Ready True for the resource's current generation."""
    found = kubectl.get(namespace, kind, name) or {}
    generation = found.get("metadata", {}).get("generation")
    condition = kubectl.condition(namespace, kind, name, "Ready")
    return condition.get("status") == "True" and condition.get("observedGeneration") == generation


def wait_ready(
    cluster: RealCluster, kind: str, name: str, timeout: float = READY_TIMEOUT_S
) -> None:
    is_ready = functools.partial(ready, cluster.kubectl, kind, name)
    wait_for(f"{kind} {name} Ready", is_ready, timeout, 1, cluster.report)


def helm() -> str:
    found = find_helm()
    if found is None:
        raise AssertionError(HOW)
    return str(found)


def install_operator(cluster: RealCluster) -> None:
    """The chart installed with helm (its default image, the one images/build.sh built)."""
    command = [
        helm(), "upgrade", "--install", "odradek", str(ROOT / "charts/odradek"),
        "--kubeconfig", str(cluster.plane.kubeconfig), "--namespace", OPERATOR_NAMESPACE,
        "--create-namespace", "--wait", "--timeout", "3m",
    ]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True, timeout=240)


def deploy_example(cluster: RealCluster) -> None:
    """The example Cluster and its Topics, Ready."""
    [resource] = example("cluster.yaml")
    resource["spec"]["coordination"]["managed"]["image"] = LOCAL_ETCD_IMAGE
    cluster.kubectl.apply(NAMESPACE, resource)
    wait_ready(cluster, "cluster", CLUSTER)
    topics = example("topics.yaml")
    cluster.kubectl.apply(NAMESPACE, *topics)
    for topic in topics:
        wait_ready(cluster, "topic", topic["metadata"]["name"], timeout=120)


def small_cluster(name: str, brokers: int = 1, **spec: Any) -> dict[str, Any]:
    """A Cluster of ``brokers`` brokers, each holding every topic, and one etcd member;
    ``spec`` adds to its spec."""
    copies = {
        "default.replication.factor": brokers,
        "min.insync.replicas": brokers,
        "offsets.topic.replication.factor": brokers,
    }
    return {
        "apiVersion": "odradek.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name},
        "spec": {
            "replicas": brokers,
            "storage": {"size": "1Gi"},
            "config": copies,
            "coordination": {"managed": {"replicas": 1, "image": LOCAL_ETCD_IMAGE}},
            **spec,
        },
    }


def create_topic(cluster: RealCluster, name: str, partitions: int) -> None:
    """A Topic resource on the example Cluster (replicas and min.insync.replicas from its
    defaults), Ready."""
    topic = {
        "apiVersion": "odradek.io/v1alpha1",
        "kind": "Topic",
        "metadata": {"name": name},
        "spec": {"cluster": CLUSTER, "partitions": partitions},
    }
    cluster.kubectl.apply(NAMESPACE, topic)
    wait_ready(cluster, "topic", name, timeout=120)


def produce_keyed(cluster: RealCluster, topic: str, first: int, count: int) -> list[str]:
    """Records ``key-i:value-i`` written with kcat and acks=all: acknowledged once it exits 0."""
    records = [f"key-{i}:value-{i}" for i in range(first, first + count)]
    command = ["kcat", "-b", BOOTSTRAP, "-P", "-t", topic, "-K", ":", "-X", "acks=all"]
    subprocess.run(
        cluster.client_argv(command), input="\n".join(records), text=True, check=True, timeout=60
    )
    return records


@dataclass
class Load:
    """Idempotent acks=all producers writing to one topic."""

    producers: list[subprocess.Popen[bytes]]
    acknowledged: int = field(default=0)

    def running(self) -> bool:
        return all(process.poll() is None for process in self.producers)


@contextlib.contextmanager
def acknowledged_load(
    cluster: RealCluster, topic: str, partitions: int, workdir: Path
) -> Iterator[Load]:
    """Producers on the host (PRODUCERS) for the duration; once they stop, every record
    they were told was acknowledged must be in the topic exactly once and in order
    (durability_verdict.py); ``Load.acknowledged`` then says how many there were."""
    load = producer_processes(BOOTSTRAP, topic, workdir, None, partitions, cluster.client_argv)
    with load as producers:
        state = Load(producers)
        yield state
        assert state.running(), "a producer died under load"
    reports = [f"{name}={workdir / f'{name}.report'}" for name in PRODUCERS]
    verdict = run_client(
        cluster, sys.executable, str(VERDICT_SCRIPT), "--bootstrap", BOOTSTRAP,
        "--topic", topic, "--partitions", str(partitions), *reports,
    )  # fmt: skip
    assert verdict.startswith("durable: "), verdict
    state.acknowledged = int(verdict.split()[3])
