"""Each topic's partitions as Metadata responses encode them, kept with the metadata image
they came from: they change only with it, and a topic of 10,000 partitions takes tens of
milliseconds to encode."""

from __future__ import annotations

from odradek.broker.cluster.metadata_image import MetadataImage, PartitionState, TopicMetadata
from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.metadata_response import MetadataPartition, encode_partitions


class EncodedPartitions:
    def __init__(self) -> None:
        self._image: MetadataImage | None = None
        self._encoded: dict[tuple[str, int], bytes] = {}  # (topic, version): partitions

    def of(self, topic: TopicMetadata, image: MetadataImage, version: int) -> bytes:
        """``topic``'s partitions array, as ``image`` has them, in Metadata ``version``. Only
        the image's own topics are kept (not one just created that it does not hold yet)."""
        if image.topics.get(topic.name) is not topic:
            return encode_partitions(version, partition_entries(topic, image))
        if image is not self._image:
            self._image, self._encoded = image, {}
        key = (topic.name, version)
        encoded = self._encoded.get(key)
        if encoded is None:
            encoded = encode_partitions(version, partition_entries(topic, image))
            self._encoded[key] = encoded
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
