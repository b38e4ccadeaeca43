from __future__ import annotations

from operator_world import World, resource

from odradek.operator.handlers.metrics import RECONCILIATIONS
from odradek.operator.handlers.resync import resync_once


def count(kind: str, outcome: str) -> float:
    return RECONCILIATIONS.labels(kind, outcome)._value.get()


def test_resync_visits_every_resource_and_survives_one_failing() -> None:
    world = World()
    world.kube.add(resource("Cluster", "events", {}))
    world.kube.add(resource("Topic", "broken", {"cluster": "events", "partitions": -5}))
    world.kube.add(resource("Topic", "orders", {"cluster": "events"}))
    errors, successes = count("Topic", "error"), count("Topic", "success")
    resync_once(world.context, ("prod",))
    assert count("Topic", "error") == errors + 1
    assert count("Topic", "success") == successes + 1
    assert "orders" in world.kafka.topics
    assert "status" in world.body("Cluster", "events")


def test_resources_being_deleted_are_left_to_their_deletion_handlers() -> None:
    world = World()
    topic = resource("Topic", "orders", {"cluster": "events"})
    topic["metadata"]["deletionTimestamp"] = "2026-03-01T00:00:00Z"
    world.kube.add(resource("Cluster", "events", {}))
    world.kube.add(topic)
    resync_once(world.context, ())
    assert world.kafka.topics == {}
