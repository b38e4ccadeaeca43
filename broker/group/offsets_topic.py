"""Creating ``__consumer_offsets`` on first need, and finding a group's coordinator in it."""

from __future__ import annotations

import logging

from odradek.broker.cluster.metadata_image import BrokerRegistration, TopicMetadata
from odradek.broker.cluster.metadata_store import MetadataStore
from odradek.broker.cluster.topic_planning import plan_topic
from odradek.broker.group.group_config import GroupConfig
from odradek.broker.group.group_partition import OFFSETS_TOPIC, partition_for_group
from odradek.broker.protocol.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)

# Kafka's fixed settings of the offsets topic (offsets.topic.segment.bytes is 100 MiB)
OFFSETS_TOPIC_CONFIGS = {"cleanup.policy": "compact", "segment.bytes": str(100 * 1024 * 1024)}


async def ensure_offsets_topic(store: MetadataStore, config: GroupConfig) -> TopicMetadata:
    """The offsets topic, created now if missing. Like Kafka, creation waits (the client
    retries on COORDINATOR_NOT_AVAILABLE) until offsets.topic.replication.factor brokers
    are alive, so the topic is never created under-replicated while a cluster starts."""
    image = store.image
    topic = image.topics.get(OFFSETS_TOPIC)
    if topic is not None:
        return topic
    replication = config.offsets_topic_replication_factor
    if len(image.brokers) < replication:
        raise KafkaError(
            ErrorCode.coordinator_not_available,
            f"{OFFSETS_TOPIC} needs {replication} live brokers "
            f"(offsets.topic.replication.factor), {len(image.brokers)} are registered",
        )
    planned = plan_topic(
        image,
        OFFSETS_TOPIC,
        config.offsets_topic_partitions,
        replication,
        configs=OFFSETS_TOPIC_CONFIGS,
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
            OFFSETS_TOPIC,
            len(planned.partitions),
            replication,
        )
    created = store.image.topics.get(OFFSETS_TOPIC)
    if created is None:
        raise KafkaError(ErrorCode.coordinator_not_available, f"{OFFSETS_TOPIC} is being created")
    return created


async def find_group_coordinator(
    store: MetadataStore, config: GroupConfig, group_id: str
) -> BrokerRegistration:
    """The broker leading the group's partition, or COORDINATOR_NOT_AVAILABLE."""
    topic = await ensure_offsets_topic(store, config)
    state = topic.partitions[partition_for_group(group_id, len(topic.partitions))]
    broker = store.image.brokers.get(state.leader)
    if broker is None:
        raise KafkaError(ErrorCode.coordinator_not_available, f"no live leader for {group_id!r}")
    return broker
