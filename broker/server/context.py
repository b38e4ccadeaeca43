"""What request handlers see of the broker."""

from __future__ import annotations

from dataclasses import dataclass

from odradek.broker.cluster.metadata_image import TopicMetadata
from odradek.broker.cluster.metadata_store import MetadataStore
from odradek.broker.cluster.replica_manager import ReplicaManager
from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.config.topic_config import TopicConfig, validate_topic_configs
from odradek.broker.server.metrics import BrokerMetrics
from odradek.broker.server.producer_ids import ProducerIdAllocator


@dataclass
class BrokerContext:
    config: BrokerConfig
    store: MetadataStore
    replicas: ReplicaManager
    metrics: BrokerMetrics
    producer_ids: ProducerIdAllocator

    def topic_config(self, topic: TopicMetadata) -> TopicConfig:
        return TopicConfig(self.config, validate_topic_configs(topic.configs))
