"""Effective topic configuration: the topic's own values over the broker's defaults."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.config.definitions import LONG_MAX, TOPIC_CONFIGS, ConfigError
from odradek.broker.config.parsing import parse_values
from odradek.broker.log.log_config import LogConfig

_MS_PER_MINUTE = 60_000
_MS_PER_HOUR = 3_600_000

# Topic keys whose broker default comes from the first of several broker keys that is
# set, each in its own unit, as in Kafka (retention.ms: log.retention.ms, then
# log.retention.minutes, then log.retention.hours, whose default always applies).
SYNONYM_CHAINS: dict[str, tuple[tuple[str, int], ...]] = {
    "retention.ms": (
        ("log.retention.ms", 1),
        ("log.retention.minutes", _MS_PER_MINUTE),
        ("log.retention.hours", _MS_PER_HOUR),
    ),
    "segment.ms": (("log.roll.ms", 1), ("log.roll.hours", _MS_PER_HOUR)),
    "segment.jitter.ms": (("log.roll.jitter.ms", 1), ("log.roll.jitter.hours", _MS_PER_HOUR)),
}


def broker_synonyms(name: str) -> tuple[str, ...]:
    """The broker keys that supply topic key ``name``'s default, first match wins."""
    chain = SYNONYM_CHAINS.get(name)
    if chain is not None:
        return tuple(key for key, _ in chain)
    synonym = TOPIC_CONFIGS[name].broker_synonym
    return (synonym,) if synonym else ()


def broker_default(broker: BrokerConfig, name: str) -> object:
    """The value a topic gets for ``name`` when it does not set it."""
    chain = SYNONYM_CHAINS.get(name)
    if chain is not None:
        for key, scale in chain:
            value = broker.get(key)
            if value is not None:
                assert isinstance(value, int)
                return -1 if value < 0 else value * scale
        raise AssertionError(f"the last key of {name}'s chain always has a default")
    if name == "flush.ms":
        value = broker.get("log.flush.interval.ms")
        return LONG_MAX if value is None else value
    synonym = TOPIC_CONFIGS[name].broker_synonym
    return broker.get(synonym) if synonym else TOPIC_CONFIGS[name].default


def validate_topic_configs(values: Mapping[str, str | None]) -> dict[str, object]:
    """Parse topic config overrides; unknown keys and bad values raise ConfigError."""
    present = {key: value for key, value in values.items() if value is not None}
    unset = [key for key, value in values.items() if value is None and key not in TOPIC_CONFIGS]
    if unset:
        raise ConfigError(f"{unset[0]}: unknown configuration key")
    return parse_values(TOPIC_CONFIGS, present)


@dataclass(frozen=True)
class TopicConfig:
    """A topic's overrides resolved against the broker's configuration."""

    broker: BrokerConfig
    overrides: Mapping[str, object]

    def get(self, name: str) -> object:
        if name in self.overrides:
            return self.overrides[name]
        return broker_default(self.broker, name)

    def get_int(self, name: str) -> int:
        value = self.get(name)
        assert isinstance(value, int)
        return value

    def get_list(self, name: str) -> list[str]:
        value = self.get(name)
        assert isinstance(value, list)
        return [str(item) for item in value]

    def get_float(self, name: str) -> float:
        value = self.get(name)
        assert isinstance(value, int | float)
        return float(value)

    def log_config(self) -> LogConfig:
        return LogConfig(
            segment_bytes=self.get_int("segment.bytes"),
            segment_ms=self.get_int("segment.ms"),
            index_interval_bytes=self.get_int("index.interval.bytes"),
            flush_messages=self.get_int("flush.messages"),
            flush_ms=self.get_int("flush.ms"),
            retention_ms=self.get_int("retention.ms"),
            retention_bytes=self.get_int("retention.bytes"),
            cleanup_policy=tuple(self.get_list("cleanup.policy")),
            delete_retention_ms=self.get_int("delete.retention.ms"),
            min_compaction_lag_ms=self.get_int("min.compaction.lag.ms"),
            min_cleanable_dirty_ratio=self.get_float("min.cleanable.dirty.ratio"),
            max_message_bytes=self.get_int("max.message.bytes"),
            message_timestamp_type=str(self.get("message.timestamp.type")),
            compression_type=str(self.get("compression.type")),
            file_delete_delay_ms=self.get_int("file.delete.delay.ms"),
            segment_index_bytes=self.get_int("segment.index.bytes"),
            segment_jitter_ms=self.get_int("segment.jitter.ms"),
            max_compaction_lag_ms=self.get_int("max.compaction.lag.ms"),
            timestamp_before_max_ms=self.get_int("message.timestamp.before.max.ms"),
            timestamp_after_max_ms=self.get_int("message.timestamp.after.max.ms"),
            gzip_level=self.get_int("compression.gzip.level"),
            lz4_level=self.get_int("compression.lz4.level"),
            zstd_level=self.get_int("compression.zstd.level"),
        )
