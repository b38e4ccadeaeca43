"""The share groups' broker settings (Kafka's names; defaults in ``config/definitions.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from odradek.broker.cluster.internal_topics import InternalTopic
from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.share.share_state import SHARE_STATE_TOPIC


@dataclass(frozen=True)
class ShareConfig:
    state_topic: InternalTopic
    state_min_insync: int
    write_timeout_ms: int
    max_share_sessions: int
    fetch_max_bytes: int

    @classmethod
    def from_broker(cls, config: BrokerConfig) -> ShareConfig:
        clustered = bool(config.get("etcd.endpoints"))
        # a single broker on the embedded store can never hold more than one replica
        replication = (
            config.get_int("share.coordinator.state.topic.replication.factor") if clustered else 1
        )
        min_insync = min(config.get_int("share.coordinator.state.topic.min.isr"), replication)
        topic = InternalTopic(
            SHARE_STATE_TOPIC,
            config.get_int("share.coordinator.state.topic.num.partitions"),
            replication,
            "share.coordinator.state.topic.replication.factor",
            {
                "cleanup.policy": "compact",
                "segment.bytes": str(config.get_int("share.coordinator.state.topic.segment.bytes")),
                "min.insync.replicas": str(min_insync),
            },
        )
        return cls(
            state_topic=topic,
            state_min_insync=min_insync,
            write_timeout_ms=config.get_int("share.coordinator.write.timeout.ms"),
            max_share_sessions=config.get_int("group.share.max.share.sessions"),
            fetch_max_bytes=config.get_int("fetch.max.bytes"),
        )
