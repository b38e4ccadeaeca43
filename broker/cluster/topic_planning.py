"""Validating a topic creation request and deciding its layout (pure)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping, Sequence

from odradek.broker.cluster.metadata_image import MetadataImage, PartitionState, TopicMetadata
from odradek.broker.cluster.replica_placement import assign_replicas
from odradek.broker.protocol.errors import ErrorCode, KafkaError

MAX_TOPIC_NAME_LENGTH = 249
_LEGAL_TOPIC_NAME = re.compile(r"^[a-zA-Z0-9._-]+$")


def validate_topic_name(name: str) -> None:
    if not name or name in (".", ".."):
        raise KafkaError(ErrorCode.invalid_topic_exception, f"topic name {name!r} is illegal")
    if len(name) > MAX_TOPIC_NAME_LENGTH:
        raise KafkaError(
            ErrorCode.invalid_topic_exception,
            f"topic name is longer than {MAX_TOPIC_NAME_LENGTH} characters",
        )
    if not _LEGAL_TOPIC_NAME.match(name):
        raise KafkaError(
            ErrorCode.invalid_topic_exception,
            f"topic name {name!r} may only contain ASCII letters, digits, '.', '_' and '-'",
        )


def plan_topic(
    image: MetadataImage,
    name: str,
    partitions: int,
    replication_factor: int,
    assignments: Mapping[int, Sequence[int]] | None = None,
    configs: Mapping[str, str] | None = None,
    internal: bool = False,
) -> TopicMetadata:
    """The metadata of a new topic, or a KafkaError saying why it cannot be created."""
    validate_topic_name(name)
    if name in image.topics:
        raise KafkaError(ErrorCode.topic_already_exists, f"topic {name!r} already exists")
    if assignments:
        replica_lists = _explicit_assignment(image, assignments)
    else:
        replica_lists = assign_replicas(
            list(image.brokers.values()), partitions, replication_factor
        )
    states = _new_states(0, replica_lists)
    return TopicMetadata(name, uuid.uuid4(), states, dict(configs or {}), internal)


def _new_states(first: int, replica_lists: Sequence[tuple[int, ...]]) -> tuple[PartitionState, ...]:
    return tuple(
        PartitionState(partition=first + index, replicas=replicas, leader=replicas[0], isr=replicas)
        for index, replicas in enumerate(replica_lists)
    )


def plan_new_partitions(
    image: MetadataImage,
    topic: TopicMetadata,
    count: int,
    assignments: Sequence[Sequence[int]] | None = None,
) -> tuple[PartitionState, ...]:
    """The partitions to add so that ``topic`` has ``count`` of them."""
    current = len(topic.partitions)
    if count < current:  # Kafka's messages
        raise KafkaError(
            ErrorCode.invalid_partitions,
            f"The topic {topic.name} currently has {current} partition(s); "
            f"{count} would not be an increase.",
        )
    if count == current:
        raise KafkaError(ErrorCode.invalid_partitions, f"Topic already has {current} partition(s).")
    factor = len(topic.partitions[0].replicas)
    if assignments:
        if len(assignments) != count - current:
            raise KafkaError(
                ErrorCode.invalid_replica_assignment,
                f"{len(assignments)} assignments given for {count - current} new partitions",
            )
        replica_lists = _explicit_assignment(image, dict(enumerate(assignments)))
        if len(replica_lists[0]) != factor:
            raise KafkaError(
                ErrorCode.invalid_replica_assignment,
                f"new partitions need {factor} replicas like the existing ones",
            )
    else:
        replica_lists = assign_replicas(
            list(image.brokers.values()), count - current, factor, first_partition=current
        )
    return _new_states(current, replica_lists)


def _explicit_assignment(
    image: MetadataImage, assignments: Mapping[int, Sequence[int]]
) -> list[tuple[int, ...]]:
    if sorted(assignments) != list(range(len(assignments))):
        raise KafkaError(
            ErrorCode.invalid_replica_assignment,
            "partitions of an explicit assignment must be numbered 0..N-1",
        )
    replica_lists = [tuple(assignments[index]) for index in range(len(assignments))]
    sizes = {len(replicas) for replicas in replica_lists}
    for replicas in replica_lists:
        if not replicas or len(set(replicas)) != len(replicas):
            raise KafkaError(
                ErrorCode.invalid_replica_assignment, "each partition needs distinct replicas"
            )
        unknown = [broker for broker in replicas if broker not in image.brokers]
        if unknown:
            raise KafkaError(ErrorCode.invalid_replica_assignment, f"unknown broker ids {unknown}")
    if len(sizes) != 1:
        raise KafkaError(
            ErrorCode.invalid_replica_assignment,
            "all partitions must have the same number of replicas",
        )
    return replica_lists
