from __future__ import annotations

from operator_world import LOGGER, World, resource

from odradek.operator.handlers.kopf_handlers import mirror_changed

SPEC = {
    "source": {"alias": "east", "bootstrapServers": "east:9092"},
    "target": {"alias": "west", "cluster": "west"},
    "topics": {"include": ["orders.*"]},
}


def run(world: World) -> None:
    mirror_changed(body=world.body("MirrorMaker", "dr"), memo=world.memo, logger=LOGGER)


def test_a_mirror_becomes_a_deployment_and_reports_mirrored_topics() -> None:
    world = World()
    world.kube.add(resource("Cluster", "west", {}))
    world.kube.add(resource("MirrorMaker", "dr", SPEC))
    for name in ("east.orders", "east.payments", "local", "east.orders-eu"):
        world.kafka.create_topic(name, 1, 1, {})
    run(world)
    deployment = world.get("Deployment", "dr-mirror", "apps/v1")
    assert deployment["spec"]["replicas"] == 1
    assert world.get("ConfigMap", "dr-mirror")["data"]["mirror.yaml"]
    status = world.status("MirrorMaker", "dr")
    assert status["mirroredTopics"] == ["east.orders", "east.orders-eu"]
    assert world.condition("MirrorMaker", "dr")["message"] == "0 of 1 mirror processes ready"
    world.kube.objects["apps/v1", "Deployment", "prod", "dr-mirror"]["status"] = {
        "replicas": 1,
        "readyReplicas": 1,
    }
    run(world)
    assert world.condition("MirrorMaker", "dr")["status"] == "True"


def test_a_mirror_to_a_missing_cluster_says_so_and_creates_nothing() -> None:
    world = World()
    world.kube.add(resource("MirrorMaker", "dr", SPEC))
    run(world)
    assert world.condition("MirrorMaker", "dr")["reason"] == "ClusterNotFound"
    assert world.kube.get("apps/v1", "Deployment", "dr-mirror", "prod") is None
