"""Each topic's partitions as Metadata responses encode them, kept while the topic and the
brokers' states are those they were encoded from: a topic of 10,000 partitions takes tens
of milliseconds to encode, and most new images (another topic's leader moved, an ACL
added) leave a topic as it was."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from odradek.broker.cluster.metadata_image import (
    BrokerRegistration,
    MetadataImage,
    PartitionState,
    TopicMetadata,
)
from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.metadata_response import MetadataPartition, encode_partitions


@dataclass(frozen=True)
class _Encoded:
    """A topic's partitions array, and what it was encoded from."""

    topic: TopicMetadata
    brokers: Mapping[int, BrokerRegistration]
    unfenced: Mapping[int, int]
    partitions: bytes

    def current(self, image: MetadataImage) -> bool:
        """Whether ``image`` holds the same topic, with its brokers in the same states."""
        return (
            image.topics.get(self.topic.name) is self.topic
            and self.brokers == image.brokers
            and self.unfenced == image.unfenced
        )


class EncodedPartitions:
    def __init__(self) -> None:
        self._kept: dict[tuple[str, int], _Encoded] = {}  # (topic, version)

    def of(self, topic: TopicMetadata, image: MetadataImage, version: int) -> bytes:
        """``topic``'s partitions array, as ``image`` has them, in Metadata ``version``. Only
        the image's own topics are kept (not one just created that it does not hold yet)."""
        if image.topics.get(topic.name) is not topic:
            return encode_partitions(version, partition_entries(topic, image))
        kept = self._kept.get((topic.name, version))
        if kept is not None and kept.current(image):
            return kept.partitions
        encoded = encode_partitions(version, partition_entries(topic, image))
        if len(self._kept) > 2 * len(image.topics) + 16:  # deleted topics' arrays go
            self._kept = {key: kept for key, kept in self._kept.items() if kept.current(image)}
        self._kept[(topic.name, version)] = _Encoded(topic, image.brokers, image.unfenced, encoded)
        return encoded


def partition_entries(topic: TopicMetadata, image: MetadataImage) -> list[MetadataPartition]:
    """A topic's partitions as ``image`` has them; a replica is offline where Kafka says so:
    its broker unregistered or fenced, or the replica in a log dir its broker reported
    offline."""
    offline = image.offline_holders()
    fenced = image.fenced_brokers()

    def offline_replicas(state: PartitionState) -> tuple[int, ...]:
        lost = offline.get((topic.name, state.partition), frozenset())
        return tuple(
            r for r in state.replicas if r not in image.brokers or r in fenced or r in lost
        )

    return [
        MetadataPartition(
            (ErrorCode.leader_not_available if state.leader < 0 else ErrorCode.none).value,
            state.partition,
            state.leader,
            state.leader_epoch,
            tuple(state.replicas),
            tuple(state.isr),
            offline_replicas(state),
        )
        for state in topic.partitions
    ]
