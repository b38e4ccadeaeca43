"""The operator on a real API server: the example Cluster from apply to deletion.

The operator runs as a local process with the chart's RBAC. A 3-broker Odradek
cluster on loopback answers its Kafka admin calls in place of the brokers the
pods would run (the Cluster's admin-bootstrap-servers annotation); the tests play
scheduler and kubelet. The tests run in order, on one Cluster.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from cluster_harness import ClusterFactory
from e2e_kubectl import Kubectl, new_namespace, wait_for
from kubelet_stand_in import KubeletStandIn
from operator_scenario import CLUSTERS, NODES, Scenario, example, pointed_at

pytestmark = pytest.mark.slow

OWNED = [
    ("serviceaccount", "events-broker"),
    ("configmap", "events-config"),
    ("service", "events-brokers"),
    ("service", "events-bootstrap"),
    ("service", "events-etcd"),
    ("statefulset", "events-broker"),
    ("statefulset", "events-etcd"),
    ("poddisruptionbudget", "events-broker"),
    ("poddisruptionbudget", "events-etcd"),
]


@pytest.fixture(scope="module")
def scenario(
    kubectl: Kubectl, operator: None, kubelet: KubeletStandIn, brokers: ClusterFactory
) -> Iterator[Scenario]:
    namespace = new_namespace(kubectl)
    for node, zone in NODES.items():
        kubelet.register_node(node, zone)
    scenario = Scenario(kubectl, kubelet, namespace, brokers(3))
    cluster = pointed_at(example("cluster"), scenario.loopback)
    cluster["metadata"]["namespace"] = namespace
    kubectl.run("apply", "-f", "-", stdin=yaml.safe_dump(cluster))
    yield scenario
    kubectl.run("delete", "namespace", namespace, "--wait=false")


def owner_uids(obj: dict[str, Any]) -> list[tuple[str, str, bool]]:
    return [
        (ref["kind"], ref["uid"], bool(ref.get("controller")))
        for ref in obj["metadata"].get("ownerReferences", [])
    ]


def test_applying_the_example_cluster_creates_its_objects_owned_by_it(scenario: Scenario) -> None:
    wait_for(
        "the broker StatefulSet",
        lambda: scenario.kubectl.get(scenario.namespace, "statefulset", "events-broker"),
        timeout=60,
        every=0.5,
    )
    uid = scenario.resource()["metadata"]["uid"]
    for kind, name in OWNED:
        assert owner_uids(scenario.get(kind, name)) == [("Cluster", uid, True)], (kind, name)
    binding = scenario.kubectl.json(
        "get", "clusterrolebinding", f"odradek-{scenario.namespace}-events-node-reader"
    )
    assert binding["roleRef"]["name"] == "odradek-node-reader"
    assert binding["subjects"][0]["name"] == "events-broker"


def all_pods(scenario: Scenario, count: int) -> dict[int, dict[str, Any]] | None:
    pods = scenario.broker_pods()
    return pods if len(pods) == count else None


def test_the_statefulset_controller_creates_broker_pods_and_claims(scenario: Scenario) -> None:
    pods = wait_for(
        "3 broker pods",
        lambda: all_pods(scenario, 3),
        timeout=60,
        every=0.5,
    )
    assert sorted(pods) == [0, 1, 2]
    assert all(p["status"]["phase"] == "Pending" for p in pods.values())
    for broker in range(3):
        claim = scenario.get("persistentvolumeclaim", f"data-events-broker-{broker}")
        assert claim["spec"]["resources"]["requests"]["storage"] == "20Gi"
        assert claim["status"]["phase"] == "Pending"  # no provisioner here


def test_the_cluster_reports_progress_while_no_broker_is_ready(scenario: Scenario) -> None:
    ready = scenario.wait_condition(
        lambda c: c["message"] == "0 of 3 brokers ready", "Ready False, 0 of 3 brokers ready"
    )
    assert ready["status"] == "False" and ready["reason"] == "BrokersNotReady"
    assert scenario.condition("Progressing")["status"] == "True"
    status = scenario.resource()["status"]
    assert status["observedGeneration"] == scenario.resource()["metadata"]["generation"]
    assert [b["ready"] for b in status["brokers"]] == [False, False, False]


def test_the_cluster_is_ready_once_the_kubelet_reports_every_broker_ready(
    scenario: Scenario,
) -> None:
    assert sorted(scenario.start_brokers()) == [f"events-broker-{i}" for i in range(3)]
    ready = scenario.wait_condition(lambda c: c["status"] == "True", "Ready True")
    assert ready["message"] == "3 brokers ready, all partitions in sync"
    status = scenario.resource()["status"]
    assert status["bootstrapServers"] == f"events-bootstrap.{scenario.namespace}.svc:9092"
    assert [(b["id"], b["rack"], b["ready"]) for b in status["brokers"]] == [
        (0, "zone-a", True),
        (1, "zone-b", True),
        (2, "zone-c", True),
    ]
    assert status["controller"] == scenario.loopback.controller()
    assert status["underReplicatedPartitions"] == 0
    assert scenario.condition("Progressing")["status"] == "False"
    assert "3 brokers ready, all partitions in sync" in scenario.events("Reconciled")


def changed_brokers(scenario: Scenario, before: dict[int, str], done: list[int]) -> list[int]:
    """Brokers, not yet restarted, whose pod is being deleted or was replaced."""
    pods = scenario.broker_pods()
    changed = [
        broker
        for broker, uid in before.items()
        if broker not in done
        and (
            broker not in pods
            or pods[broker]["metadata"].get("deletionTimestamp")
            or pods[broker]["metadata"]["uid"] != uid
        )
    ]
    assert len(changed) <= 1, f"brokers {changed} restarted at once"
    return changed


def replaced_pod(scenario: Scenario, broker: int, old_uid: str) -> dict[str, Any] | None:
    pod = scenario.broker_pods().get(broker)
    return pod if pod is not None and pod["metadata"]["uid"] != old_uid else None


def restart_next(scenario: Scenario, before: dict[int, str], done: list[int], image: str) -> int:
    """Wait for the operator's next restart; check it waits for the new pod to be ready."""
    [broker] = wait_for(
        "the next broker restart", lambda: changed_brokers(scenario, before, done), every=0.5
    )
    scenario.finish_deletions()
    pod = wait_for(
        f"broker {broker}'s new pod",
        lambda: replaced_pod(scenario, broker, before[broker]),
        every=0.5,
    )
    assert pod["spec"]["containers"][0]["image"] == image
    # The operator waits for it, saying so while others remain to be restarted.
    expected = "2 of 3 brokers ready" if len(done) == 2 else f"waiting for broker {broker} to be"
    scenario.wait_condition(lambda c: expected in c["message"], f"Ready saying {expected!r}")
    assert changed_brokers(scenario, before, [*done, broker]) == []  # nothing else went down
    scenario.start_brokers()
    return broker


def test_a_config_and_image_change_rolls_one_broker_at_a_time_the_controller_last(
    scenario: Scenario,
) -> None:
    controller = scenario.loopback.controller()
    before = {b: p["metadata"]["uid"] for b, p in scenario.broker_pods().items()}
    image = "ghcr.io/odradek/odradek:0.1.1"
    # Also relaxes the example's replication settings, which the schema would not let
    # scale below 3 brokers (the scale tests below).
    config = {
        "log.retention.hours": 24,
        "default.replication.factor": None,
        "min.insync.replicas": 1,
    }
    patch = {"spec": {"image": image, "config": config}}
    scenario.kubectl.run(
        "patch",
        CLUSTERS,
        "events",
        "-n",
        scenario.namespace,
        "--type=merge",
        "-p",
        json.dumps(patch),
    )
    order: list[int] = []
    for _ in range(3):
        order.append(restart_next(scenario, before, order, image))
    assert order == [*sorted({0, 1, 2} - {controller}), controller]
    scenario.wait_condition(lambda c: c["status"] == "True", "Ready True after the roll")
    properties = scenario.get("configmap", "events-config")["data"]["broker.properties"]
    assert "log.retention.hours=24" in properties.splitlines()


def scale(scenario: Scenario, replicas: int) -> None:
    scenario.kubectl.run(
        "scale", CLUSTERS, "events", "-n", scenario.namespace, f"--replicas={replicas}"
    )


def statefulset_replicas(scenario: Scenario) -> int:
    return int(scenario.get("statefulset", "events-broker")["spec"]["replicas"])


def test_scaling_below_a_topics_replication_factor_is_refused_in_status(
    scenario: Scenario,
) -> None:
    scenario.loopback.create_topic(partitions=3, replication_factor=2, prefix="orders")
    scale(scenario, 1)
    degraded = scenario.wait_condition(
        lambda c: c["status"] == "True", "Degraded True", type_="Degraded"
    )
    assert degraded["reason"] == "ScaleDownRefused"
    assert "need 2 replicas; lower their replicas first" in degraded["message"]
    assert statefulset_replicas(scenario) == 3
    scale_subresource = scenario.kubectl.json(
        "get", CLUSTERS, "events", "-n", scenario.namespace, "--subresource=scale"
    )
    assert scale_subresource["spec"]["replicas"] == 1
    assert scale_subresource["status"]["replicas"] == 3


def test_scaling_down_drains_the_leaving_broker_before_the_statefulset_shrinks(
    scenario: Scenario,
) -> None:
    scale(scenario, 2)
    wait_for("the StatefulSet to shrink", lambda: statefulset_replicas(scenario) == 2, every=0.5)
    draining = scenario.events("Draining")
    assert any(m.startswith("draining before scale-down: broker 2 holds") for m in draining)
    assert all(2 not in p.replicas for p in scenario.loopback.state().partitions)
    wait_for(
        "broker 2's pod to go",
        lambda: scenario.finish_deletions() or (2 not in scenario.broker_pods()),
        every=0.5,
    )
    scenario.get("persistentvolumeclaim", "data-events-broker-2")  # kept: deleteClaim is false
    ready = scenario.wait_condition(lambda c: c["status"] == "True", "Ready True at 2 brokers")
    assert ready["message"] == "2 brokers ready, all partitions in sync"
    assert scenario.condition("Degraded")["status"] == "False"


def test_deleting_the_cluster_garbage_collects_its_objects_but_keeps_the_claims(
    scenario: Scenario,
) -> None:
    scenario.kubectl.run("delete", CLUSTERS, "events", "-n", scenario.namespace)

    def collected() -> bool:
        scenario.finish_deletions()
        left = [o for o in OWNED if scenario.kubectl.get(scenario.namespace, *o)]
        return not left and not scenario.broker_pods()

    wait_for("garbage collection of the Cluster's objects", collected, timeout=90, every=1)
    for broker in range(3):
        scenario.get("persistentvolumeclaim", f"data-events-broker-{broker}")
    binding = f"odradek-{scenario.namespace}-events-node-reader"
    wait_for(
        "the node-reader ClusterRoleBinding to go",
        lambda: (
            "NotFound" in scenario.kubectl.run("get", "clusterrolebinding", binding, check=False)
        ),
        timeout=30,
        every=1,
    )
