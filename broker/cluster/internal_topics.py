"""The internal topics coordinators keep their state in (``__consumer_offsets``,
``__transaction_state``): made on first need, and the broker that coordinates a key."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from odradek.broker.cluster.metadata_image import BrokerRegistration, TopicMetadata
from odradek.broker.cluster.metadata_store import MetadataStore
from odradek.broker.cluster.topic_planning import plan_topic
from odradek.broker.protocol.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class InternalTopic:
    name: str
    partitions: int
    replication_factor: int
    replication_setting: str
    """The broker setting ``replication_factor`` comes from, for the error that names it."""
    configs: Mapping[str, str]


async def ensure_internal_topic(store: MetadataStore, topic: InternalTopic) -> TopicMetadata:
    """The topic, created now if missing. Like Kafka, creation waits (the client retries on
    COORDINATOR_NOT_AVAILABLE) until its replication factor of brokers are alive, so it is
    never created under-replicated while a cluster starts."""
    image = store.image
    existing = image.topics.get(topic.name)
    if existing is not None:
        return existing
    replication = topic.replication_factor
    if len(image.brokers) < replication:
        raise KafkaError(
            ErrorCode.coordinator_not_available,
            f"{topic.name} needs {replication} live brokers "
            f"({topic.replication_setting}), {len(image.brokers)} are registered",
        )
    planned = plan_topic(
        image,
        topic.name,
        topic.partitions,
        replication,
        configs=dict(topic.configs),
        internal=True,
    )
    try:
        await store.create_topic(planned)
    except KafkaError as error:
        if error.code is not ErrorCode.topic_already_exists:
            raise KafkaError(ErrorCode.coordinator_not_available, error.message) from None
    else:
        log.info(
            "created %s with %d partitions, replication factor %d",
            topic.name,
            len(planned.partitions),
            replication,
        )
    created = store.image.topics.get(topic.name)
    if created is None:
        raise KafkaError(ErrorCode.coordinator_not_available, f"{topic.name} is being created")
    return created


async def find_coordinator(
    store: MetadataStore,
    topic: InternalTopic,
    key: str,
    partition_for: Callable[[str, int], int],
) -> BrokerRegistration:
    """The broker leading ``key``'s partition, or COORDINATOR_NOT_AVAILABLE."""
    metadata = await ensure_internal_topic(store, topic)
    state = metadata.partitions[partition_for(key, len(metadata.partitions))]
    broker = store.image.brokers.get(state.leader)
    if broker is None:
        raise KafkaError(ErrorCode.coordinator_not_available, f"no live leader for {key!r}")
    return broker
