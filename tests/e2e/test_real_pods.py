"""The operator and its clusters on real pods: containers from the built images, run by
kubelets on containerd, scheduled over three zones, on local volumes, named by CoreDNS
and reached through kube-proxy (real_node.py). Nothing here plays the kubelet.

The chart is installed with helm as a user would, and the example Cluster and Topics
are applied (real_pods.py). Clients run on the host with the cluster's DNS as their
resolver, so they reach the brokers by the names the brokers advertise.
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from e2e_kubectl import Kubectl, wait_for
from real_node import RealCluster
from real_pods import (
    BOOTSTRAP,
    CLUSTER,
    NAMESPACE,
    OPERATOR_NAMESPACE,
    READY_TIMEOUT_S,
    acknowledged_load,
    fully_in_sync,
    metadata,
    pod_ready,
    ready_pods,
    run_client,
    wait_ready,
)

pytestmark = pytest.mark.slow

LOAD_TOPIC = "orders"
LOAD_PARTITIONS = 12
ZONE_LABEL = "topology.kubernetes.io/zone"
PROBE = """
import os, sys
print("uid", os.getuid())
for volume in sys.argv[1:]:
    owners = sorted({os.stat(os.path.join(volume, name)).st_uid for name in os.listdir(volume)})
    print("volume group", os.stat(volume).st_gid, "owners", *owners)
sys.stdout.flush()
open("/probe", "w")
"""
# Each resource in a request of its own: a broker's config is answered by that broker.
DESCRIBE_CONFIGS = """
import json, sys
from confluent_kafka.admin import AdminClient, ConfigResource, ConfigSource
admin = AdminClient({"bootstrap.servers": sys.argv[1]})
found = {}
for resource in sys.argv[2:]:
    kind, name = resource.split("/", 1)
    [future] = admin.describe_configs([ConfigResource(kind, name)]).values()
    entries = future.result().values()
    found[resource] = {e.name: [e.value, ConfigSource(e.source).name] for e in entries}
print(json.dumps(found))
"""


def probe(kubectl: Kubectl, namespace: str, pod: str, volume: str = "") -> str:
    """What a process in the pod's container says of itself: its uid, the group of
    ``volume`` and the owners of what is in it, then its attempt to write on the root
    filesystem."""
    return kubectl.run(
        "exec", "-n", namespace, pod, "--", "python3", "-c", PROBE, *([volume] if volume else []),
        check=False,
    )  # fmt: skip


def test_helm_runs_the_operator_as_a_pod_from_the_built_image(
    real_cluster: RealCluster, operator_pod: None
) -> None:
    kubectl = real_cluster.kubectl
    [pod] = kubectl.items(OPERATOR_NAMESPACE, "pods", "app.kubernetes.io/name=odradek")
    [container] = pod["status"]["containerStatuses"]
    assert container["ready"] and "running" in container["state"]
    assert container["image"].startswith("ghcr.io/odradek/odradek:")
    assert pod["spec"]["nodeName"] in {node.name for node in real_cluster.nodes}
    # what the chart's values ask for, as the pod the kubelet ran has it
    security = pod["spec"]["securityContext"]
    assert security["runAsNonRoot"] and security["runAsUser"] == 1000
    assert security["seccompProfile"]["type"] == "RuntimeDefault"
    [spec] = pod["spec"]["containers"]
    assert spec["securityContext"]["readOnlyRootFilesystem"] is True
    assert spec["securityContext"]["allowPrivilegeEscalation"] is False
    said = probe(kubectl, OPERATOR_NAMESPACE, pod["metadata"]["name"])
    assert said.startswith("uid 1000\n") and "Read-only file system" in said, said
    log = kubectl.run("logs", "-n", OPERATOR_NAMESPACE, pod["metadata"]["name"])
    assert "Initial authentication has finished" in log


def test_the_example_cluster_runs_on_pods_spread_over_zones_and_serves_clients(
    real_cluster: RealCluster, events: str
) -> None:
    kubectl = real_cluster.kubectl
    zone_of = {node.name: node.zone for node in real_cluster.nodes}
    for component in ("broker", "etcd"):
        # A broker is ready only while in sync on every partition it follows
        # (/readyz), which a busy machine can interrupt for a moment.
        selector = f"app.kubernetes.io/instance={CLUSTER},app.kubernetes.io/component={component}"
        every_one = functools.partial(ready_pods, kubectl, selector)
        pods = wait_for(f"{component} pods ready", every_one, 120, 1, real_cluster.report)
        assert len(pods) == 3
        assert {zone_of[pod["spec"]["nodeName"]] for pod in pods} == set(zone_of.values())
        if component == "broker":
            node_of = {pod["metadata"]["name"]: pod["spec"]["nodeName"] for pod in pods}
    claims = kubectl.items(NAMESPACE, "persistentvolumeclaims")
    assert len(claims) == 6 and all(c["status"]["phase"] == "Bound" for c in claims)
    # the local volume is the pod's group's (fsGroup); the broker, uid 1000, writes there
    # and nowhere else
    said = probe(kubectl, NAMESPACE, f"{CLUSTER}-broker-0", "/var/lib/odradek")
    assert said.startswith("uid 1000\nvolume group 1000 owners 1000\n"), said
    assert "Read-only file system" in said, said

    wait_ready(real_cluster, "cluster", CLUSTER)
    status = kubectl.json("get", "cluster", CLUSTER, "-n", NAMESPACE)["status"]
    zone_label = {
        node["metadata"]["name"]: node["metadata"]["labels"][ZONE_LABEL]
        for node in kubectl.items(NAMESPACE, "nodes")
    }
    assert sorted(b["pod"] for b in status["brokers"]) == sorted(node_of)
    for broker in status["brokers"]:
        assert broker["rack"] == zone_label[node_of[broker["pod"]]], broker
    racks = {b["id"]: b["rack"] for b in status["brokers"]}
    assert status["controller"] in racks
    assert status["underReplicatedPartitions"] == 0

    brokers = sorted((b["id"], b["name"]) for b in metadata(real_cluster)["brokers"])
    assert brokers == [
        (i, f"{CLUSTER}-broker-{i}.{CLUSTER}-brokers.default.svc:9092") for i in range(3)
    ]

    topics = {t["topic"]: len(t["partitions"]) for t in metadata(real_cluster)["topics"]}
    assert topics["orders"] == 12 and topics["customer.profiles"] == 6

    # The Topics' config as the brokers report it, set on the topic (not the brokers'
    # defaults: log.retention.hours 168 is the same 7 days), and each broker's rack.
    resources = ["topic/orders", "topic/customer.profiles", *(f"broker/{i}" for i in racks)]
    described = run_client(
        real_cluster, sys.executable, "-c", DESCRIBE_CONFIGS, BOOTSTRAP, *resources
    )
    configs = json.loads(described)
    topic_level = "DYNAMIC_TOPIC_CONFIG"
    assert configs["topic/orders"]["retention.ms"] == ["604800000", topic_level]
    assert configs["topic/orders"]["min.insync.replicas"] == ["2", topic_level]
    assert configs["topic/customer.profiles"]["cleanup.policy"] == ["compact", topic_level]
    assert configs["topic/customer.profiles"]["compression.type"] == ["zstd", topic_level]
    for broker, rack in racks.items():
        assert configs[f"broker/{broker}"]["broker.rack"][0] == rack

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

    with acknowledged_load(real_cluster, LOAD_TOPIC, LOAD_PARTITIONS, tmp_path) as load:
        time.sleep(5)
        kubectl.run("delete", "pod", victim, "-n", NAMESPACE, "--wait=false")

        def back() -> bool:
            pod = kubectl.get(NAMESPACE, "pod", victim)
            return (
                pod is not None
                and pod["metadata"]["uid"] != before["metadata"]["uid"]
                and pod_ready(pod)
            )

        wait_for(f"{victim} recreated and ready", back, READY_TIMEOUT_S, 1, real_cluster.report)
        in_sync = functools.partial(fully_in_sync, real_cluster, LOAD_TOPIC)
        wait_for("every replica back in sync", in_sync, 120, 2, real_cluster.report)
        time.sleep(5)

    after = kubectl.get(NAMESPACE, "pvc", claim)
    assert after is not None and after["spec"]["volumeName"] == volume["spec"]["volumeName"]
    assert load.acknowledged > 1000
