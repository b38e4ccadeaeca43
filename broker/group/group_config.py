"""The coordinator's settings, read once from the broker configuration (Kafka's names).

The defaults live with the keys in ``config/definitions.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.config.definitions import ConfigError
from odradek.broker.group.consumer_assignors import ASSIGNOR_CLASSES


@dataclass(frozen=True)
class GroupConfig:
    offsets_topic_partitions: int
    # A single broker on the embedded store can never hold more than one replica.
    offsets_topic_replication_factor: int
    offsets_retention_ms: int
    offsets_retention_check_interval_ms: int
    initial_rebalance_delay_ms: int
    min_session_timeout_ms: int
    max_session_timeout_ms: int
    max_size: int
    offset_metadata_max_bytes: int
    commit_timeout_ms: int
    consumer_heartbeat_interval_ms: int = 5000
    consumer_session_timeout_ms: int = 45000
    consumer_max_size: int = 2**31 - 1
    consumer_assignors: tuple[str, ...] = ("uniform", "range")
    consumer_migration_policy: str = "bidirectional"
    share_heartbeat_interval_ms: int = 5000
    share_min_heartbeat_interval_ms: int = 5000
    share_max_heartbeat_interval_ms: int = 15000
    share_session_timeout_ms: int = 45000
    share_min_session_timeout_ms: int = 45000
    share_max_session_timeout_ms: int = 60000
    share_max_size: int = 200

    def accepts_session_timeout(self, session_timeout_ms: int) -> bool:
        """Within ``group.min.session.timeout.ms``..``group.max.session.timeout.ms``."""
        return self.min_session_timeout_ms <= session_timeout_ms <= self.max_session_timeout_ms

    def _check_share_bounds(self) -> None:
        """Kafka's startup checks of the share group settings: the heartbeat interval and
        session timeout within their bounds, the interval shorter than the session."""
        bounded = (
            ("heartbeat.interval.ms", self.share_heartbeat_interval_ms,
             self.share_min_heartbeat_interval_ms, self.share_max_heartbeat_interval_ms),
            ("session.timeout.ms", self.share_session_timeout_ms,
             self.share_min_session_timeout_ms, self.share_max_session_timeout_ms),
        )  # fmt: skip
        for name, value, lowest, highest in bounded:
            if not lowest <= value <= highest:
                raise ConfigError(
                    f"group.share.{name}: {value} is not between group.share.min.{name} "
                    f"({lowest}) and group.share.max.{name} ({highest})"
                )
        if self.share_heartbeat_interval_ms >= self.share_session_timeout_ms:
            raise ConfigError(
                "group.share.heartbeat.interval.ms must be less than group.share.session.timeout.ms"
            )

    @classmethod
    def from_broker(cls, config: BrokerConfig) -> GroupConfig:
        group_config = cls(
            offsets_topic_partitions=config.get_int("offsets.topic.num.partitions"),
            offsets_topic_replication_factor=(
                config.get_int("offsets.topic.replication.factor")
                if config.get("etcd.endpoints")
                else 1
            ),
            offsets_retention_ms=config.get_int("offsets.retention.minutes") * 60_000,
            offsets_retention_check_interval_ms=config.get_int(
                "offsets.retention.check.interval.ms"
            ),
            initial_rebalance_delay_ms=config.get_int("group.initial.rebalance.delay.ms"),
            min_session_timeout_ms=config.get_int("group.min.session.timeout.ms"),
            max_session_timeout_ms=config.get_int("group.max.session.timeout.ms"),
            max_size=config.get_int("group.max.size"),
            offset_metadata_max_bytes=config.get_int("offset.metadata.max.bytes"),
            commit_timeout_ms=config.get_int("offsets.commit.timeout.ms"),
            consumer_heartbeat_interval_ms=config.get_int("group.consumer.heartbeat.interval.ms"),
            consumer_session_timeout_ms=config.get_int("group.consumer.session.timeout.ms"),
            consumer_max_size=config.get_int("group.consumer.max.size"),
            consumer_migration_policy=str(config.get("group.consumer.migration.policy")),
            consumer_assignors=tuple(
                ASSIGNOR_CLASSES.get(str(name), str(name))
                for name in list(config.get("group.consumer.assignors"))  # type: ignore[call-overload]
            ),
            share_heartbeat_interval_ms=config.get_int("group.share.heartbeat.interval.ms"),
            share_min_heartbeat_interval_ms=config.get_int("group.share.min.heartbeat.interval.ms"),
            share_max_heartbeat_interval_ms=config.get_int("group.share.max.heartbeat.interval.ms"),
            share_session_timeout_ms=config.get_int("group.share.session.timeout.ms"),
            share_min_session_timeout_ms=config.get_int("group.share.min.session.timeout.ms"),
            share_max_session_timeout_ms=config.get_int("group.share.max.session.timeout.ms"),
            share_max_size=config.get_int("group.share.max.size"),
        )
        group_config._check_share_bounds()
        return group_config
