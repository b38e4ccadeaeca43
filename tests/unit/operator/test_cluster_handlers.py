from __future__ import annotations

from typing import Any

from operator_world import LOGGER, NOW, World, resource

from odradek.operator.constants import REVISION_LABEL
from odradek.operator.handlers.kopf_handlers import cluster_changed


def create_cluster(world: World, spec: dict[str, Any] | None = None, generation: int = 1) -> None:
    world.kube.add(resource("Cluster", "events", spec or {}, generation))
    run(world)


def run(world: World) -> None:
    cluster_changed(body=world.body("Cluster", "events"), memo=world.memo, logger=LOGGER)


def start_pods(
    world: World, count: int, revision: str = "r1", ready: bool = True, node: str = "n1"
) -> None:
    """Do what the StatefulSet controller and kubelets would."""
    sts = world.kube.objects["apps/v1", "StatefulSet", "prod", "events-broker"]
    sts["status"] = {"updateRevision": revision}
    labels = sts["spec"]["template"]["metadata"]["labels"]
    for i in range(count):
        world.kube.add(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": f"events-broker-{i}",
                    "namespace": "prod",
                    "labels": {
                        **labels,
                        REVISION_LABEL: revision,
                        "apps.kubernetes.io/pod-index": str(i),
                    },
                },
                "spec": {"nodeName": node},
                "status": {"conditions": [{"type": "Ready", "status": str(ready)}]},
            }
        )
    world.kube.add(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": node, "labels": {"topology.kubernetes.io/zone": "z1"}},
            "status": {
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "lastTransitionTime": "2026-01-01T00:00:00Z",
                    }
                ]
            },
        }
    )


def test_a_new_cluster_gets_its_objects_and_reports_progress() -> None:
    world = World()
    create_cluster(world)
    kinds = {(k[1], k[3]) for k in world.kube.objects}
    assert {
        ("StatefulSet", "events-broker"),
        ("StatefulSet", "events-etcd"),
        ("ConfigMap", "events-config"),
        ("Service", "events-bootstrap"),
        ("PodDisruptionBudget", "events-broker"),
        ("ServiceAccount", "events-broker"),
    } <= kinds
    status = world.status("Cluster", "events")
    assert status["observedGeneration"] == 1
    assert status["bootstrapServers"] == "events-bootstrap.prod.svc:9092"
    assert status["selector"] == (
        "app.kubernetes.io/component=broker,app.kubernetes.io/instance=events,"
        "app.kubernetes.io/name=odradek"
    )
    ready = world.condition("Cluster", "events")
    assert ready["status"] == "False" and ready["message"] == "0 of 3 brokers ready"
    assert world.condition("Cluster", "events", "Progressing")["status"] == "True"


def test_cluster_is_ready_when_every_broker_is_ready_and_in_sync() -> None:
    world = World()
    create_cluster(world, {"rack": {}})
    start_pods(world, 3)
    run(world)
    status = world.status("Cluster", "events")
    assert world.condition("Cluster", "events")["status"] == "True"
    assert status["controller"] == 0 and status["underReplicatedPartitions"] == 0
    assert status["brokers"][2] == {"id": 2, "pod": "events-broker-2", "rack": "z1", "ready": True}
    assert status["replicas"] == 3
    assert ("Normal", "Reconciled", "3 brokers ready, all partitions in sync") in world.kube.events


def test_a_spec_change_rolls_one_broker_at_a_time_with_the_controller_last() -> None:
    world = World()
    world.kafka.controller = 0
    create_cluster(world)
    start_pods(world, 3, revision="r1")
    world.kube.objects["apps/v1", "StatefulSet", "prod", "events-broker"]["status"] = {
        "updateRevision": "r2"
    }
    run(world)
    assert world.kube.deleted == [("Pod", "events-broker-1", None)]
    ready = world.condition("Cluster", "events")
    assert ready["reason"] == "RollingRestart" and "broker 1" in ready["message"]
    run(world)  # broker 1 is gone (not ready): nothing else goes down meanwhile
    assert world.kube.deleted == [("Pod", "events-broker-1", None)]


def test_a_restart_that_would_break_min_isr_waits_and_says_why() -> None:
    world = World(brokers=2)
    create_cluster(world, {"replicas": 2})
    world.kafka.create_topic("orders", 1, 2, {"min.insync.replicas": "2"})
    start_pods(world, 2, revision="r1")
    world.kube.objects["apps/v1", "StatefulSet", "prod", "events-broker"]["status"] = {
        "updateRevision": "r2"
    }
    run(world)
    assert world.kube.deleted == []
    assert (
        "would put orders-0 under min.insync.replicas"
        in world.condition("Cluster", "events")["message"]
    )


def scale(world: World, replicas: int, generation: int) -> None:
    cluster = world.kube.objects["odradek.io/v1alpha1", "Cluster", "prod", "events"]
    cluster["spec"]["replicas"] = replicas
    cluster["metadata"]["generation"] = generation
    run(world)


def sts_replicas(world: World) -> int:
    return int(world.get("StatefulSet", "events-broker", "apps/v1")["spec"]["replicas"])


def test_scale_down_drains_the_leaving_brokers_before_shrinking() -> None:
    world = World(brokers=5)
    create_cluster(world, {"replicas": 5})
    start_pods(world, 5)
    world.kafka.create_topic("orders", 5, 2, {})
    scale(world, 3, generation=2)
    assert sts_replicas(world) == 5
    assert world.kafka.reassignments, "replicas on brokers 3 and 4 are moved"
    assert world.condition("Cluster", "events")["reason"] == "Draining"
    assert "broker 3 holds" in world.condition("Cluster", "events")["message"]
    run(world)
    assert sts_replicas(world) == 3
    assert world.condition("Cluster", "events")["reason"] == "ScalingDown"


def test_scale_down_below_a_topics_replication_is_refused_in_status() -> None:
    world = World(brokers=3)
    create_cluster(world)
    start_pods(world, 3)
    world.kafka.create_topic("orders", 1, 3, {})
    scale(world, 2, generation=2)
    assert sts_replicas(world) == 3
    degraded = world.condition("Cluster", "events", "Degraded")
    assert degraded["status"] == "True" and degraded["reason"] == "ScaleDownRefused"
    assert degraded["observedGeneration"] == 2
    assert any(e[0] == "Warning" and "orders-0 need 3 replicas" in e[2] for e in world.kube.events)


def test_a_broker_on_a_lost_node_is_replaced_with_its_local_volume() -> None:
    world = World()
    create_cluster(world)
    start_pods(world, 3, node="n1")
    node = world.kube.objects["v1", "Node", None, "n1"]
    node["status"]["conditions"][0]["status"] = "Unknown"
    world.kube.add(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data-events-broker-0", "namespace": "prod"},
            "spec": {"volumeName": "pv0"},
        }
    )
    world.kube.add(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "pv0"},
            "spec": {
                "nodeAffinity": {
                    "required": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {
                                        "key": "kubernetes.io/hostname",
                                        "operator": "In",
                                        "values": ["n1"],
                                    }
                                ]
                            }
                        ]
                    }
                }
            },
        }
    )
    run(world)
    assert world.kube.deleted == [
        ("PersistentVolumeClaim", "data-events-broker-0", None),
        ("Pod", "events-broker-0", 0),
    ]
    [record] = world.status("Cluster", "events")["replacedBrokers"]
    assert record.startswith(NOW.strftime("%Y-%m-%dT%H:%M:%SZ")) and "node n1" in record


def test_unreachable_kafka_keeps_the_cluster_not_ready() -> None:
    world = World()
    create_cluster(world)
    start_pods(world, 3)
    world.kafka.available = False
    run(world)
    assert world.condition("Cluster", "events")["reason"] == "MetadataUnavailable"
