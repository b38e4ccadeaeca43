"""Creating and deleting topics: shared by CreateTopics, DeleteTopics and auto-creation."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from odradek.broker.cluster.metadata_image import TopicMetadata
from odradek.broker.cluster.topic_planning import plan_new_partitions, plan_topic
from odradek.broker.config.definitions import ConfigError
from odradek.broker.config.topic_config import validate_topic_configs
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.server.client_quota_manager import record_mutations
from odradek.broker.server.context import BrokerContext

log = logging.getLogger(__name__)


async def create_topic(
    context: BrokerContext,
    name: str,
    partitions: int = -1,
    replication_factor: int = -1,
    assignments: Mapping[int, Sequence[int]] | None = None,
    configs: Mapping[str, str | None] | None = None,
    validate_only: bool = False,
    settle_s: float = 0.0,
) -> TopicMetadata:
    """Plan (and unless ``validate_only``, create) a topic; -1 takes the broker default.
    Waits up to ``settle_s`` for this broker's replicas of it to have their logs."""
    if assignments and (partitions != -1 or replication_factor != -1):
        raise KafkaError(
            ErrorCode.invalid_request,
            "give either an explicit assignment or partitions and replication factor",
        )
    try:
        validate_topic_configs(configs or {})
    except ConfigError as error:
        raise KafkaError(ErrorCode.invalid_config, str(error)) from None
    topic = plan_topic(
        context.store.image,
        name,
        partitions if partitions != -1 else context.config.get_int("num.partitions"),
        (
            replication_factor
            if replication_factor != -1
            else context.config.get_int("default.replication.factor")
        ),
        assignments,
        {key: value for key, value in (configs or {}).items() if value is not None},
    )
    if not validate_only:
        record_mutations(len(topic.partitions))
        await context.store.create_topic(topic)
        await context.replicas.settled(settle_s)
        log.info(
            "created topic %s with %d partitions",
            name,
            len(topic.partitions),
            extra={"topic": name},
        )
    return topic


async def add_partitions(
    context: BrokerContext,
    name: str,
    count: int,
    assignments: Sequence[Sequence[int]] | None = None,
    validate_only: bool = False,
    settle_s: float = 0.0,
) -> None:
    """Grow ``name`` to ``count`` partitions (CreatePartitions); waits up to ``settle_s``
    for this broker's new replicas to have their logs."""
    topic = context.store.image.topics.get(name)
    if topic is None:
        raise KafkaError(ErrorCode.unknown_topic_or_partition, f"no topic {name!r}")
    partitions = plan_new_partitions(context.store.image, topic, count, assignments)
    if not validate_only:
        record_mutations(len(partitions))
        await context.store.add_partitions(name, partitions)
        await context.replicas.settled(settle_s)
        log.info("topic %s now has %d partitions", name, count, extra={"topic": name})


async def delete_topic(context: BrokerContext, name: str) -> None:
    if not context.config.get_bool("delete.topic.enable"):
        raise KafkaError(ErrorCode.topic_deletion_disabled, "delete.topic.enable is false")
    topic = context.store.image.topics.get(name)
    record_mutations(len(topic.partitions) if topic is not None else 0)
    await context.store.delete_topic(name)
    log.info("deleted topic %s", name, extra={"topic": name})
