from __future__ import annotations

from typing import Any

from operator_world import LOGGER, World, resource

from odradek.operator.handlers.kopf_handlers import topic_changed, topic_deleted


def setup(spec: dict[str, Any], with_cluster: bool = True) -> World:
    world = World()
    if with_cluster:
        world.kube.add(resource("Cluster", "events", {"replicas": 3}))
    world.kube.add(resource("Topic", "orders", {"cluster": "events", **spec}))
    run(world)
    return world


def run(world: World) -> None:
    topic_changed(body=world.body("Topic", "orders"), memo=world.memo, logger=LOGGER)


def edit(world: World, generation: int, **spec: Any) -> None:
    topic = world.kube.objects["odradek.io/v1alpha1", "Topic", "prod", "orders"]
    topic["spec"].update(spec)
    topic["metadata"]["generation"] = generation
    run(world)


def test_a_topic_is_created_on_its_cluster_and_reported_ready() -> None:
    world = setup({"partitions": 6, "replicas": 2, "config": {"retention.ms": 60000}})
    topic = world.kafka.topics["orders"]
    assert len(topic.replicas) == 6 and len(topic.replicas[0]) == 2
    assert topic.configs == {"retention.ms": "60000"}
    status = world.status("Topic", "orders")
    assert status["topicId"] == topic.id and status["partitions"] == 6 and status["replicas"] == 2
    assert world.condition("Topic", "orders")["status"] == "True"
    assert world.kafka.bootstrap_servers == "events-bootstrap.prod.svc:9092"


def test_topic_name_defaults_to_the_resource_name_and_can_be_set() -> None:
    world = setup({"topicName": "orders.v2"})
    assert set(world.kafka.topics) == {"orders.v2"}


def test_added_partitions_and_changed_configs_are_applied() -> None:
    world = setup({"partitions": 2, "config": {"retention.ms": 1}})
    edit(world, 2, partitions=4, config={"cleanup.policy": "compact"})
    assert len(world.kafka.topics["orders"].replicas) == 4
    assert world.kafka.topics["orders"].configs == {"cleanup.policy": "compact"}
    assert world.condition("Topic", "orders")["observedGeneration"] == 2


def test_decreasing_partitions_is_refused_with_a_clear_condition() -> None:
    world = setup({"partitions": 4})
    edit(world, 2, partitions=2)
    assert len(world.kafka.topics["orders"].replicas) == 4
    ready = world.condition("Topic", "orders")
    assert ready["status"] == "False" and ready["reason"] == "ChangeRefused"
    assert ready["message"] == "partitions cannot decrease from 4 to 2; the topic keeps 4"


def test_replication_factor_changes_by_reassignment() -> None:
    world = setup({"partitions": 2, "replicas": 1})
    edit(world, 2, replicas=3)
    assert all(len(r) == 3 for r in world.kafka.topics["orders"].replicas)


def test_a_topic_whose_cluster_does_not_exist_says_so() -> None:
    world = setup({}, with_cluster=False)
    ready = world.condition("Topic", "orders")
    assert ready["reason"] == "ClusterNotFound"
    assert ready["message"] == "Cluster events does not exist in this namespace"


def test_deleting_a_topic_deletes_it_in_kafka() -> None:
    world = setup({})
    topic_deleted(body=world.body("Topic", "orders"), memo=world.memo, logger=LOGGER)
    assert "orders" not in world.kafka.topics


def test_deletion_never_waits_for_a_cluster_that_is_gone() -> None:
    world = setup({})
    world.kube.delete("odradek.io/v1alpha1", "Cluster", "events", "prod")
    world.kafka.available = False  # its brokers went with it
    topic_deleted(body=world.body("Topic", "orders"), memo=world.memo, logger=LOGGER)


def test_deletion_never_waits_for_a_cluster_being_deleted() -> None:
    world = setup({})
    cluster = world.kube.objects["odradek.io/v1alpha1", "Cluster", "prod", "events"]
    cluster["metadata"]["deletionTimestamp"] = "2026-03-01T12:00:00Z"
    world.kafka.available = False
    topic_deleted(body=world.body("Topic", "orders"), memo=world.memo, logger=LOGGER)
