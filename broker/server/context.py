"""What request handlers see of the broker."""

from __future__ import annotations

from dataclasses import dataclass, field

from odradek.broker.cluster.metadata_image import MetadataImage, TopicMetadata
from odradek.broker.cluster.metadata_store import MetadataStore
from odradek.broker.cluster.replica_manager import ReplicaManager
from odradek.broker.cluster.replication_quota import ReplicationQuota
from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.config.topic_config import TopicConfig, validate_topic_configs
from odradek.broker.group.coordinator import GroupCoordinator
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.server.authorization import RequestAuthorization
from odradek.broker.server.client_quota_manager import ClientQuotaManager
from odradek.broker.server.fetch_sessions import FetchSessionCache
from odradek.broker.server.metadata_partitions import EncodedPartitions
from odradek.broker.server.metrics import BrokerMetrics
from odradek.broker.server.producer_ids import ProducerIdAllocator
from odradek.broker.server.request_queue import RequestQueue
from odradek.broker.share.share_broker import ShareBroker
from odradek.broker.transaction.coordinator import TransactionCoordinator
from odradek.broker.transaction.verification import TransactionVerifier


@dataclass
class BrokerContext:
    static_config: BrokerConfig
    store: MetadataStore
    replicas: ReplicaManager
    metrics: BrokerMetrics
    producer_ids: ProducerIdAllocator
    groups: GroupCoordinator
    transactions: TransactionCoordinator
    # KIP-890: a partition leader's check with the coordinator of a transaction's first batch
    verifier: TransactionVerifier
    # share groups' partitions, sessions and state coordinator (KIP-932)
    shares: ShareBroker
    # who may do what (authorizer.class.name); off: everything is allowed
    authorization: RequestAuthorization = field(default_factory=RequestAuthorization.off)
    # leader.replication.throttled.rate over the replicas topics list as throttled
    leader_quota: ReplicationQuota = field(init=False)
    # client quotas (producer_byte_rate, ...) from the metadata image, measured here
    quotas: ClientQuotaManager = field(init=False)
    # queued.max.requests and queued.max.request.bytes; left by requests entering a purgatory
    requests: RequestQueue = field(init=False)
    # incremental fetch sessions (KIP-227), max.incremental.fetch.session.cache.slots of them
    fetch_sessions: FetchSessionCache = field(init=False)
    # topics' partitions as Metadata answers encode them, kept with the image
    metadata_partitions: EncodedPartitions = field(default_factory=EncodedPartitions, repr=False)
    # Resolved configs are cached against the immutable objects they came from.
    _config_cache: tuple[MetadataImage, BrokerConfig] | None = field(default=None, repr=False)
    _topic_configs: dict[str, tuple[TopicMetadata, BrokerConfig, TopicConfig]] = field(
        default_factory=dict, repr=False
    )

    def __post_init__(self) -> None:
        self.leader_quota = ReplicationQuota(
            lambda: self.config.get_int("leader.replication.throttled.rate"),
            self.static_config.get_int("replication.quota.window.num"),
            self.static_config.get_int("replication.quota.window.size.seconds"),
        )
        self.quotas = ClientQuotaManager(
            lambda: self.store.image,
            self.metrics.throttle_time,
            self.static_config.get_int("quota.window.num"),
            self.static_config.get_int("quota.window.size.seconds"),
            self.static_config.get_int("controller.quota.window.num"),
            self.static_config.get_int("controller.quota.window.size.seconds"),
        )
        self.requests = RequestQueue(
            self.static_config.get_int("queued.max.requests"),
            self.static_config.get_int("queued.max.request.bytes"),
            self.metrics.request_queue_size,
            self.metrics.request_queue_bytes,
            self.metrics.request_queue_time,
        )
        self.fetch_sessions = FetchSessionCache(
            self.static_config.get_int("max.incremental.fetch.session.cache.slots"),
            self.metrics.fetch_sessions_changed,
            # resting followers show the leader they fetch well within the ISR's lag limit
            sweep_s=min(1.0, self.static_config.get_int("replica.lag.time.max.ms") / 8000),
        )

    @property
    def config(self) -> BrokerConfig:
        """The effective broker configuration: static values under dynamic ones."""
        image = self.store.image
        if self._config_cache is None or self._config_cache[0] is not image:
            dynamic = image.broker_configs
            config = self.static_config.with_dynamic(
                dynamic.get("", {}), dynamic.get(str(self.static_config.node_id), {})
            )
            self._config_cache = (image, config)
        return self._config_cache[1]

    def min_insync(self, topic_name: str) -> int:
        """The min.insync.replicas an acks=all write to ``topic_name`` needs now."""
        topic = self.store.image.topics.get(topic_name)
        if topic is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"no topic {topic_name!r}")
        return self.topic_config(topic).get_int("min.insync.replicas")

    def topic_config(self, topic: TopicMetadata) -> TopicConfig:
        broker = self.config
        cached = self._topic_configs.get(topic.name)
        if cached is None or cached[0] is not topic or cached[1] is not broker:
            resolved = TopicConfig(broker, validate_topic_configs(topic.configs))
            cached = (topic, broker, resolved)
            self._topic_configs[topic.name] = cached
        return cached[2]
