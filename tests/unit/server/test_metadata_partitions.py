"""The encoded partitions Metadata keeps: per image, and only the image's own topics."""

from __future__ import annotations

import uuid

from odradek.broker.cluster.metadata_image import (
    BrokerRegistration,
    MetadataImage,
    PartitionState,
    TopicMetadata,
)
from odradek.broker.protocol.metadata_response import encode_partitions
from odradek.broker.server.metadata_partitions import EncodedPartitions, partition_entries


def test_encoded_partitions_follow_the_image_and_keep_only_its_own_topics() -> None:
    """Kept per image: a new image (a leader moved) is encoded anew; a topic the image
    does not hold (one just created, ahead of the image) is encoded but never kept."""
    cache = EncodedPartitions()
    states = (PartitionState(0, (1,), leader=1, isr=(1,)),)
    image = MetadataImage("c", 1, brokers={1: BrokerRegistration(1, "h", 9093)})
    image = image.with_topic(TopicMetadata("t", uuid.uuid4(), states))
    first = cache.of(image.topics["t"], image, 12)
    assert cache.of(image.topics["t"], image, 12) is first

    moved = (PartitionState(0, (1,), leader=-1, isr=(1,)),)
    changed = image.with_topic(TopicMetadata("t", image.topics["t"].topic_id, moved))
    assert cache.of(changed.topics["t"], changed, 12) == encode_partitions(
        12, partition_entries(changed.topics["t"], changed)
    )
    assert cache.of(changed.topics["t"], changed, 12) != first

    planned = TopicMetadata("new", uuid.uuid4(), states)
    assert cache.of(planned, changed, 12) is not cache.of(planned, changed, 12)
