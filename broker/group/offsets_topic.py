"""``__consumer_offsets`` as an internal topic: Kafka's fixed settings and the broker's."""

from __future__ import annotations

from odradek.broker.cluster.internal_topics import InternalTopic
from odradek.broker.group.group_config import GroupConfig
from odradek.broker.group.group_partition import OFFSETS_TOPIC

# Kafka's fixed settings of the offsets topic (offsets.topic.segment.bytes is 100 MiB)
OFFSETS_TOPIC_CONFIGS = {"cleanup.policy": "compact", "segment.bytes": str(100 * 1024 * 1024)}


def offsets_topic(config: GroupConfig) -> InternalTopic:
    return InternalTopic(
        OFFSETS_TOPIC,
        config.offsets_topic_partitions,
        config.offsets_topic_replication_factor,
        "offsets.topic.replication.factor",
        OFFSETS_TOPIC_CONFIGS,
    )
