"""Topic creation requests are validated the way Kafka validates them."""

from __future__ import annotations

import pytest

from odradek.broker.cluster.metadata_image import BrokerRegistration, MetadataImage
from odradek.broker.cluster.topic_planning import plan_new_partitions, plan_topic
from odradek.broker.protocol.errors import ErrorCode, KafkaError

IMAGE = MetadataImage("cluster", 0, {i: BrokerRegistration(i, "h", 9092 + i) for i in range(3)}, {})


@pytest.mark.parametrize("name", ["", ".", "..", "a" * 250, "bad name", "ü"])
def test_illegal_topic_names_are_refused(name: str) -> None:
    with pytest.raises(KafkaError) as raised:
        plan_topic(IMAGE, name, 1, 1)
    assert raised.value.code is ErrorCode.invalid_topic_exception


def test_existing_topic_is_topic_already_exists() -> None:
    image = IMAGE.with_topic(plan_topic(IMAGE, "orders", 1, 1))
    with pytest.raises(KafkaError) as raised:
        plan_topic(image, "orders", 1, 1)
    assert raised.value.code is ErrorCode.topic_already_exists


def test_explicit_assignment_is_taken_as_given() -> None:
    topic = plan_topic(IMAGE, "orders", -1, -1, {0: [2, 1], 1: [0, 2]})
    assert [p.replicas for p in topic.partitions] == [(2, 1), (0, 2)]
    assert [p.leader for p in topic.partitions] == [2, 0]
    assert topic.partitions[0].isr == (2, 1)


@pytest.mark.parametrize(
    "assignment",
    [{0: [0, 0]}, {0: [7]}, {1: [0]}, {0: [0], 1: [0, 1]}],
    ids=["duplicate-replica", "unknown-broker", "gap-in-partitions", "uneven-sizes"],
)
def test_bad_explicit_assignments_are_invalid_replica_assignment(
    assignment: dict[int, list[int]],
) -> None:
    with pytest.raises(KafkaError) as raised:
        plan_topic(IMAGE, "orders", -1, -1, assignment)
    assert raised.value.code is ErrorCode.invalid_replica_assignment


@pytest.mark.parametrize(
    ("count", "message"),
    [
        (2, "The topic orders currently has 3 partition(s); 2 would not be an increase."),
        (3, "Topic already has 3 partition(s)."),
    ],
)
def test_partitions_only_grow_with_kafkas_messages(count: int, message: str) -> None:
    topic = plan_topic(IMAGE, "orders", 3, 1)
    with pytest.raises(KafkaError) as raised:
        plan_new_partitions(IMAGE.with_topic(topic), topic, count)
    assert raised.value.code is ErrorCode.invalid_partitions
    assert raised.value.message == message
