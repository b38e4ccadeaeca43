"""The transaction coordinator's settings, read once from the broker configuration
(Kafka's names; the defaults live with the keys in ``config/definitions.py``)."""

from __future__ import annotations

from dataclasses import dataclass

from odradek.broker.cluster.internal_topics import InternalTopic
from odradek.broker.config.broker_config import BrokerConfig

TRANSACTION_STATE_TOPIC = "__transaction_state"


@dataclass(frozen=True)
class TransactionConfig:
    topic: InternalTopic
    min_insync: int
    max_timeout_ms: int
    id_expiration_ms: int
    abort_timed_out_interval_ms: int
    remove_expired_interval_ms: int
    write_timeout_ms: int

    @classmethod
    def from_broker(cls, config: BrokerConfig) -> TransactionConfig:
        clustered = bool(config.get("etcd.endpoints"))
        # a single broker on the embedded store can never hold more than one replica
        replication = config.get_int("transaction.state.log.replication.factor") if clustered else 1
        min_insync = min(config.get_int("transaction.state.log.min.isr"), replication)
        configs = {
            "cleanup.policy": "compact",
            "segment.bytes": str(config.get_int("transaction.state.log.segment.bytes")),
            "min.insync.replicas": str(min_insync),
        }
        topic = InternalTopic(
            TRANSACTION_STATE_TOPIC,
            config.get_int("transaction.state.log.num.partitions"),
            replication,
            "transaction.state.log.replication.factor",
            configs,
        )
        return cls(
            topic=topic,
            min_insync=min_insync,
            max_timeout_ms=config.get_int("transaction.max.timeout.ms"),
            id_expiration_ms=config.get_int("transactional.id.expiration.ms"),
            abort_timed_out_interval_ms=config.get_int(
                "transaction.abort.timed.out.transaction.cleanup.interval.ms"
            ),
            remove_expired_interval_ms=config.get_int(
                "transaction.remove.expired.transaction.cleanup.interval.ms"
            ),
            write_timeout_ms=config.get_int("request.timeout.ms"),
        )
