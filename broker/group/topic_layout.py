"""The subscribed topics of a modern group (KIP-848 consumer, KIP-932 share) as the
coordinator sees them: their ids, their layout (partitions, replica racks) and a hash of
that layout whose change bumps the group epoch (Kafka's metadata hash)."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Iterable, Mapping

from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.group.consumer_assignors import TopicLayout


def existing_topics(image: MetadataImage, names: Iterable[str]) -> dict[uuid.UUID, str]:
    """The topics among ``names`` that exist (id -> name)."""
    found: dict[uuid.UUID, str] = {}
    for name in names:
        topic = image.topics.get(name)
        if topic is not None:
            found[topic.topic_id] = name
    return found


def topic_layouts(
    image: MetadataImage, topics: Mapping[uuid.UUID, str]
) -> dict[uuid.UUID, TopicLayout]:
    layouts = {}
    for topic_id, name in topics.items():
        metadata = image.topics[name]
        racks = tuple(
            frozenset(
                rack
                for replica in partition.replicas
                if (rack := _rack(image, replica)) is not None
            )
            for partition in metadata.partitions
        )
        layouts[topic_id] = TopicLayout(len(metadata.partitions), racks)
    return layouts


def layout_hash(image: MetadataImage, topics: Mapping[uuid.UUID, str]) -> int:
    """A stable 64-bit hash of the topics' ids, names, partitions and racks."""
    digest = hashlib.blake2b(digest_size=8)
    for topic_id, layout in sorted(topic_layouts(image, topics).items(), key=lambda t: str(t[0])):
        digest.update(f"{topic_id}/{topics[topic_id]}/{layout.partitions};".encode())
        for racks in layout.replica_racks:
            digest.update((",".join(sorted(racks)) + ";").encode())
    return int.from_bytes(digest.digest(), "big", signed=True)


def _rack(image: MetadataImage, broker: int) -> str | None:
    registration = image.brokers.get(broker)
    return registration.rack if registration is not None else None
