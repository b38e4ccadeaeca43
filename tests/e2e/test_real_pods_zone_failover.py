"""Node failover on real pods: the node of a broker is lost (its kubelet and containerd
stop, and its pods with them). Once the node has been NotReady for the Cluster's
failover grace period, the operator replaces the broker: a new pod with a new claim on
a node of another zone, which re-replicates every partition from the others. Every
record acknowledged before the loss is still there, and the cluster takes more. The
node then comes back, and its etcd member with it.

No producer runs during the loss: the lost broker's connections are not closed but
blackholed, and librdkafka's idempotent producer can end in a fatal
"Unable to reconstruct MessageSet" error (_INCONSISTENT) retrying requests that timed
out on it. Losses under load are covered by the pod deletion test and the fault tests.

Named to run last of the real-pod tests: afterwards a zone holds no broker.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import pytest
from e2e_kubectl import wait_for
from real_node import RealCluster
from real_pods import (
    BOOTSTRAP,
    CLUSTER,
    NAMESPACE,
    OPERATOR_NAMESPACE,
    READY_TIMEOUT_S,
    create_topic,
    fully_in_sync,
    pod_ready,
    produce_keyed,
    run_client,
    wait_ready,
)

# NotReady after the node monitor grace period, the failover grace, a broker rebuilt from
# nothing, then the node back
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

TOPIC = "zone-failover"
PARTITIONS = 3
GRACE_S = 30  # the smallest failover.gracePeriodSeconds a Cluster takes
BROKERS = f"app.kubernetes.io/instance={CLUSTER},app.kubernetes.io/component=broker"
ETCD = f"app.kubernetes.io/instance={CLUSTER},app.kubernetes.io/component=etcd"
# NotReady after the node monitor grace period (50 s), then GRACE_S, then a broker that
# starts on an empty disk and catches up
REPLACED_TIMEOUT_S = 300


def replaced(kubectl: Any, old: dict[str, Any], lost: str) -> dict[str, Any] | None:
    """The broker's new pod, once it runs ready on a node other than ``lost``."""
    pod = kubectl.get(NAMESPACE, "pod", old["metadata"]["name"])
    if pod is None or pod["metadata"]["uid"] == old["metadata"]["uid"]:
        return None
    return (
        pod if pod.get("spec", {}).get("nodeName") not in (None, lost) and pod_ready(pod) else None
    )


def stored(cluster: RealCluster) -> list[str]:
    out = run_client(
        cluster, "kcat", "-b", BOOTSTRAP, "-C", "-t", TOPIC, "-e", "-q", "-f", "%k:%s\n"
    )
    return out.split()


def test_a_broker_on_a_lost_node_is_rebuilt_in_another_zone_losing_nothing(
    real_cluster: RealCluster, events: str
) -> None:
    kubectl = real_cluster.kubectl
    create_topic(real_cluster, TOPIC, PARTITIONS)
    failover = {"spec": {"failover": {"gracePeriodSeconds": GRACE_S}}}
    kubectl.run("patch", "cluster", CLUSTER, "-n", NAMESPACE, "--type", "merge",
                "-p", json.dumps(failover))  # fmt: skip
    wait_ready(real_cluster, "cluster", CLUSTER)
    [operator] = kubectl.items(OPERATOR_NAMESPACE, "pods", "app.kubernetes.io/name=odradek")
    brokers = sorted(kubectl.items(NAMESPACE, "pods", BROKERS), key=lambda p: p["metadata"]["name"])
    # a node the operator does not run on (its Deployment would wait out the eviction)
    victim = next(p for p in brokers if p["spec"]["nodeName"] != operator["spec"]["nodeName"])
    node = next(n for n in real_cluster.nodes if n.name == victim["spec"]["nodeName"])
    claim_name = f"data-{victim['metadata']['name']}"
    claim = kubectl.get(NAMESPACE, "pvc", claim_name)
    assert claim is not None

    before = produce_keyed(real_cluster, TOPIC, 0, 1000)
    node.stop()
    try:
        new_pod = wait_for(
            f"{victim['metadata']['name']} rebuilt away from {node.name}",
            functools.partial(replaced, kubectl, victim, node.name),
            REPLACED_TIMEOUT_S,
            2,
            real_cluster.report,
        )
        in_sync = functools.partial(fully_in_sync, real_cluster, TOPIC)
        wait_for("every replica back in sync", in_sync, 180, 2, real_cluster.report)
        after = produce_keyed(real_cluster, TOPIC, 1000, 500)
    finally:
        node.start_again()
    assert sorted(stored(real_cluster)) == sorted(before + after)

    new_claim = kubectl.get(NAMESPACE, "pvc", claim_name)
    assert new_claim is not None and new_claim["metadata"]["uid"] != claim["metadata"]["uid"]
    assert new_claim["spec"]["volumeName"] != claim["spec"]["volumeName"]
    zones = {n.name: n.zone for n in real_cluster.nodes}
    assert zones[new_pod["spec"]["nodeName"]] != node.zone
    cluster = kubectl.get(NAMESPACE, "cluster", CLUSTER)
    assert cluster is not None
    [record] = [r for r in cluster["status"]["replacedBrokers"] if f"node {node.name}" in r]
    broker_id = int(victim["metadata"]["name"].rsplit("-", 1)[1])
    assert f"broker {broker_id}: node {node.name} has not been ready since" in record
    # The pass that replaced it set the Ready condition's reason to BrokerReplaced, with
    # the replacement as its message, until the next pass: the Event the operator writes
    # whenever that condition says something new is the lasting record of it.
    said = kubectl.json(
        "get", "events", "-n", NAMESPACE, "--field-selector",
        f"involvedObject.kind=Cluster,involvedObject.name={CLUSTER},reason=BrokerReplaced",
    )["items"]  # fmt: skip
    [event] = [e for e in said if f"node {node.name}" in e["message"]]
    assert event["message"] in record
    assert event["involvedObject"]["uid"] == cluster["metadata"]["uid"]

    def etcd_back() -> bool:
        members = kubectl.items(NAMESPACE, "pods", ETCD)
        return len(members) == 3 and all(map(pod_ready, members))

    wait_for("every etcd member ready again", etcd_back, READY_TIMEOUT_S, 2, real_cluster.report)
    wait_ready(real_cluster, "cluster", CLUSTER)
