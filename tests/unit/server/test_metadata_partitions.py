"""The encoded partitions Metadata keeps: while the topic and its brokers are as they were,
and only the image's own topics."""

from __future__ import annotations

import uuid
from dataclasses import replace

from odradek.broker.cluster.metadata_image import (
    BrokerRegistration,
    MetadataImage,
    PartitionState,
    TopicMetadata,
)
from odradek.broker.protocol.metadata_response import encode_partitions
from odradek.broker.server.metadata_partitions import EncodedPartitions, partition_entries


def test_encoded_partitions_are_kept_while_the_topic_and_brokers_stay_as_they_were() -> None:
    """Another topic's change keeps them; the topic's own change or a broker fenced makes
    them anew; a topic the image does not hold (one just created, ahead of the image) is
    encoded but never kept."""
    cache = EncodedPartitions()
    states = (PartitionState(0, (1, 2), leader=1, isr=(1, 2)),)
    image = MetadataImage(
        "c",
        1,
        brokers={1: BrokerRegistration(1, "h", 9093), 2: BrokerRegistration(2, "h", 9094)},
        unfenced={1: 0, 2: 0},
    ).with_topic(TopicMetadata("t", uuid.uuid4(), states))
    first = cache.of(image.topics["t"], image, 12)
    assert cache.of(image.topics["t"], image, 12) is first

    other = image.with_topic(TopicMetadata("other", uuid.uuid4(), states))
    assert cache.of(other.topics["t"], other, 12) is first

    moved = (PartitionState(0, (1, 2), leader=-1, isr=(1, 2)),)
    changed = other.with_topic(TopicMetadata("t", image.topics["t"].topic_id, moved))
    assert cache.of(changed.topics["t"], changed, 12) == expected(changed)
    assert cache.of(changed.topics["t"], changed, 12) != first

    fenced = replace(changed, unfenced={1: 0})  # broker 2's replica is offline now
    assert cache.of(fenced.topics["t"], fenced, 12) == expected(fenced)
    assert expected(fenced) != expected(changed)

    planned = TopicMetadata("new", uuid.uuid4(), states)
    assert cache.of(planned, fenced, 12) is not cache.of(planned, fenced, 12)


def expected(image: MetadataImage) -> bytes:
    return encode_partitions(12, partition_entries(image.topics["t"], image))
