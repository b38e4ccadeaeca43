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


def broker_default(broker: BrokerConfig, name: str) -> object:
    """The value a topic gets for ``name`` when it does not set it."""
    if name == "retention.ms":
        return _first_set(
            broker,
            ("log.retention.ms", 1),
            ("log.retention.minutes", _MS_PER_MINUTE),
            ("log.retention.hours", _MS_PER_HOUR),
        )
    if name == "segment.ms":
        return _first_set(broker, ("log.roll.ms", 1), ("log.roll.hours", _MS_PER_HOUR))
    if name == "flush.ms":
        value = broker.get("log.flush.interval.ms")
        return LONG_MAX if value is None else value
    synonym = TOPIC_CONFIGS[name].broker_synonym
    return broker.get(synonym) if synonym else TOPIC_CONFIGS[name].default


def _first_set(broker: BrokerConfig, *candidates: tuple[str, int]) -> int:
    for key, scale in candidates:
        value = broker.get(key)
        if value is not None:
            assert isinstance(value, int)
            return -1 if value < 0 else value * scale
    raise AssertionError("the last candidate always has a default")


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
        )
