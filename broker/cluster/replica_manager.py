"""The partitions this broker hosts, kept in step with the metadata image."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator

from odradek.broker.cluster.metadata_image import MetadataImage, TopicMetadata
from odradek.broker.cluster.partition import Partition, PartitionKey
from odradek.broker.log.log_config import LogConfig
from odradek.broker.log.log_manager import LogManager
from odradek.broker.protocol.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)
LogConfigFor = Callable[[TopicMetadata], LogConfig]


class ReplicaManager:
    def __init__(self, node_id: int, logs: LogManager, log_config_for: LogConfigFor) -> None:
        self._node_id = node_id
        self._logs = logs
        self._log_config_for = log_config_for
        self._partitions: dict[PartitionKey, Partition] = {}

    def __iter__(self) -> Iterator[Partition]:
        return iter(self._partitions.values())

    def get(self, topic: str, partition: int) -> Partition:
        found = self._partitions.get(PartitionKey(topic, partition))
        if found is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition)
        return found

    def apply(self, old: MetadataImage | None, new: MetadataImage) -> None:
        """Open logs for partitions newly assigned here, delete those of removed topics."""
        for topic in new.topics.values():
            config = self._log_config_for(topic)
            previous = old.topics.get(topic.name) if old else None
            if previous is not None and previous.configs != topic.configs:
                self._logs.update_config(topic.name, config)
            for state in topic.partitions:
                key = PartitionKey(topic.name, state.partition)
                existing = self._partitions.get(key)
                if existing is not None:
                    existing.state = state
                elif self._node_id in state.replicas:
                    partition_log = self._logs.get_or_create(topic.name, state.partition, config)
                    self._partitions[key] = Partition(key, partition_log, state, self._node_id)
        for key in [key for key in self._partitions if key.topic not in new.topics]:
            log.info("deleting partition %s", key)
            del self._partitions[key]
            self._logs.delete(key.topic, key.partition)
