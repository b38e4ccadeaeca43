"""Metadata and DescribeTopicPartitions list a partition's offline replicas as Kafka does:
those of brokers not registered or fenced, and those a broker reported in an offline log
dir."""

from __future__ import annotations

import uuid

from odradek.broker.cluster.metadata_image import (
    BrokerRegistration,
    MetadataImage,
    PartitionState,
    TopicMetadata,
)
from odradek.broker.server.metadata_partitions import partition_entries


def test_replicas_in_offline_log_dirs_and_of_unregistered_or_fenced_brokers_are_offline() -> None:
    states = tuple(PartitionState(p, (0, 1, 2, 3), leader=1, isr=(1,)) for p in range(2))
    image = MetadataImage(
        "c",
        1,
        brokers={
            0: BrokerRegistration(0, "h", 9092, offline_replicas=frozenset({("t", 0)})),
            1: BrokerRegistration(1, "h", 9093, offline_replicas=frozenset({("other", 1)})),
            3: BrokerRegistration(3, "h", 9095),
        },  # broker 2 is not registered, broker 3 not unfenced
        unfenced={0: 0, 1: 0},
    ).with_topic(TopicMetadata("t", uuid.uuid4(), states))

    entries = partition_entries(image.topics["t"], image)

    assert [p.offline_replicas for p in entries] == [(0, 2, 3), (2, 3)]
