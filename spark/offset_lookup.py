"""Driver-side look-ups through the Kafka admin API: partitions and their offsets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import confluent_kafka
from confluent_kafka.admin import AdminClient
from confluent_kafka.admin._listoffsets import OffsetSpec

from odradek.spark.client_config import admin_config
from odradek.spark.offsets import PartitionOffsets, TopicPartition
from odradek.spark.subscription import Subscription, select_partitions

REQUEST_TIMEOUT_S = 30.0


class OffsetLookup:
    """Metadata and ListOffsets for one query, through one admin client."""

    def __init__(self, bootstrap_servers: str, settings: Mapping[str, str]) -> None:
        self._admin = AdminClient(admin_config(bootstrap_servers, settings))

    def partitions(self, subscription: Subscription) -> list[TopicPartition]:
        """The partitions the subscription selects now."""
        metadata = self._admin.list_topics(timeout=REQUEST_TIMEOUT_S)
        counts = {
            name: len(topic.partitions)
            for name, topic in metadata.topics.items()
            if topic.error is None
        }
        return select_partitions(subscription, counts)

    def earliest(self, partitions: Sequence[TopicPartition]) -> PartitionOffsets:
        """Each partition's log start offset."""
        return self._list_offsets(partitions, OffsetSpec.earliest())  # type: ignore[no-untyped-call]

    def latest(self, partitions: Sequence[TopicPartition]) -> PartitionOffsets:
        """Each partition's high watermark."""
        return self._list_offsets(partitions, OffsetSpec.latest())  # type: ignore[no-untyped-call]

    def at_timestamp(
        self, partitions: Sequence[TopicPartition], timestamp_ms: int
    ) -> PartitionOffsets:
        """First offset with a timestamp >= ``timestamp_ms``, or -1 where there is none."""
        return self._list_offsets(partitions, OffsetSpec.for_timestamp(timestamp_ms))

    def _list_offsets(
        self, partitions: Sequence[TopicPartition], spec: OffsetSpec
    ) -> PartitionOffsets:
        if not partitions:
            return {}
        futures = self._admin.list_offsets(
            {confluent_kafka.TopicPartition(tp.topic, tp.partition): spec for tp in partitions},
            request_timeout=REQUEST_TIMEOUT_S,
        )
        return {
            TopicPartition(key.topic, key.partition): future.result().offset
            for key, future in futures.items()
        }
