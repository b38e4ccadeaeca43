"""Dynamic group configs: Kafka 4.3's GROUP config resource (``kafka-configs --entity-type
groups``, KIP-848/KIP-932), its keys, its validation and a typed view of one group's values.

A group config overrides, for one group, the broker key named as its synonym
(``consumer.session.timeout.ms`` over ``group.consumer.session.timeout.ms``). Kafka bounds
some of them by broker keys (``group.consumer.min.session.timeout.ms``, ...); where Odradek
has no such key yet, Kafka's default for it applies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from odradek.broker.config.broker_config import BrokerConfig, ConfigSource
from odradek.broker.config.definitions import (
    BROKER_CONFIGS,
    ConfigDef,
    ConfigError,
    ConfigType,
    at_least,
    one_of,
)
from odradek.broker.config.parsing import parse_value, parse_values
from odradek.broker.config.share_auto_offset_reset import (
    ShareAutoOffsetReset,
    parse_share_auto_offset_reset,
    validate_share_auto_offset_reset,
)

_NO_STREAMS = " Odradek has no streams groups (KIP-1071): stored and described only."
_ASSIGNED_AT_HEARTBEAT = (
    " Odradek assigns at the heartbeat that needs it: stored and described only."
)


def _int_key(name: str, default: int, minimum: int, synonym: str, doc: str) -> ConfigDef:
    return ConfigDef(name, ConfigType.INT, default, doc, at_least(minimum), broker_synonym=synonym)


# Kafka 4.3's GroupConfig.CONFIG_DEF: type, default, minimum and broker synonym.
GROUP_CONFIGS: dict[str, ConfigDef] = {
    definition.name: definition
    for definition in (
        _int_key("consumer.session.timeout.ms", 45000, 1, "group.consumer.session.timeout.ms",
                 "How long a member of this consumer group may go without a heartbeat."),
        _int_key("consumer.heartbeat.interval.ms", 5000, 1, "group.consumer.heartbeat.interval.ms",
                 "The heartbeat interval given to this consumer group's members."),
        _int_key("consumer.assignment.interval.ms", 1000, 0,
                 "group.consumer.assignment.interval.ms",
                 "The interval between assignment updates of this consumer group."
                 + _ASSIGNED_AT_HEARTBEAT),
        _int_key("share.session.timeout.ms", 45000, 1, "group.share.session.timeout.ms",
                 "How long a member of this share group may go without a heartbeat."),
        _int_key("share.heartbeat.interval.ms", 5000, 1, "group.share.heartbeat.interval.ms",
                 "The heartbeat interval given to this share group's members."),
        _int_key("share.record.lock.duration.ms", 30000, 1000,
                 "group.share.record.lock.duration.ms",
                 "How long a member of this share group holds the records it acquired."),
        _int_key("share.delivery.count.limit", 5, 2, "group.share.delivery.count.limit",
                 "Deliveries of a record to this share group after which it is archived."),
        _int_key("share.partition.max.record.locks", 2000, 100,
                 "group.share.partition.max.record.locks",
                 "Most records of one partition this share group may have in flight."),
        ConfigDef("share.auto.offset.reset", ConfigType.STRING, "latest",
                  "Where this share group starts reading a partition: latest, earliest or"
                  " by_duration:<ISO-8601 duration> (the first offset at or after now minus"
                  " the duration).",
                  validate_share_auto_offset_reset),
        ConfigDef("share.isolation.level", ConfigType.STRING, "read_uncommitted",
                  "read_committed: this share group gets committed transactional records only.",
                  one_of("read_committed", "read_uncommitted")),
        ConfigDef("share.renew.acknowledge.enable", ConfigType.BOOLEAN, True,
                  "Whether this share group's members may renew their record locks (RENEW)."),
        _int_key("share.assignment.interval.ms", 1000, 0, "group.share.assignment.interval.ms",
                 "The interval between assignment updates of this share group."
                 + _ASSIGNED_AT_HEARTBEAT),
        _int_key("streams.session.timeout.ms", 45000, 1, "group.streams.session.timeout.ms",
                 "How long a member of this streams group may go without a heartbeat."
                 + _NO_STREAMS),
        _int_key("streams.heartbeat.interval.ms", 5000, 1, "group.streams.heartbeat.interval.ms",
                 "The heartbeat interval given to this streams group's members." + _NO_STREAMS),
        _int_key("streams.num.standby.replicas", 0, 0, "group.streams.num.standby.replicas",
                 "Standby replicas of each task of this streams group." + _NO_STREAMS),
        _int_key("streams.initial.rebalance.delay.ms", 3000, 0,
                 "group.streams.initial.rebalance.delay.ms",
                 "How long a new streams group waits for members before its first assignment."
                 + _NO_STREAMS),
        _int_key("streams.assignment.interval.ms", 1000, 0, "group.streams.assignment.interval.ms",
                 "The interval between assignment updates of this streams group." + _NO_STREAMS),
    )
}  # fmt: skip


@dataclass(frozen=True)
class BrokerBound:
    """A broker key bounding a group config, with Kafka's default for it."""

    key: str
    kafka_default: int


def _min_max(name: str, minimum: int, maximum: int) -> tuple[BrokerBound, BrokerBound]:
    """Kafka's names of the bounds of ``<kind>.<key>``: ``group.<kind>.min.<key>``, ``max``."""
    kind, _, key = name.partition(".")
    return (
        BrokerBound(f"group.{kind}.min.{key}", minimum),
        BrokerBound(f"group.{kind}.max.{key}", maximum),
    )


# Kafka 4.3's GroupConfig.validateValues: the broker's minimum and maximum of each config.
_BOUNDS: dict[str, tuple[BrokerBound | None, BrokerBound | None]] = {
    **{
        name: _min_max(name, minimum, maximum)
        for name, minimum, maximum in (
            ("consumer.session.timeout.ms", 45000, 60000),
            ("consumer.heartbeat.interval.ms", 5000, 15000),
            ("consumer.assignment.interval.ms", 0, 15000),
            ("share.session.timeout.ms", 45000, 60000),
            ("share.heartbeat.interval.ms", 5000, 15000),
            ("share.record.lock.duration.ms", 15000, 60000),
            ("share.delivery.count.limit", 2, 10),
            ("share.partition.max.record.locks", 100, 4000),
            ("share.assignment.interval.ms", 0, 15000),
            ("streams.session.timeout.ms", 45000, 60000),
            ("streams.heartbeat.interval.ms", 5000, 15000),
            ("streams.assignment.interval.ms", 0, 15000),
        )
    },
    "streams.num.standby.replicas": (None, BrokerBound("group.streams.max.standby.replicas", 2)),
}
# Each session timeout must stay above its heartbeat interval.
_SESSION_OVER_HEARTBEAT = tuple(
    (f"{kind}.session.timeout.ms", f"{kind}.heartbeat.interval.ms")
    for kind in ("consumer", "share", "streams")
)


def validate_group_configs(configs: Mapping[str, str], broker: BrokerConfig) -> None:
    """Check a group's whole set of values as Kafka 4.3's GroupConfig.validate does: known
    keys, well-typed values within their ConfigDef ranges, within the broker's bounds, and
    each session timeout above its heartbeat interval (a value the group does not set is the
    broker's). A ConfigError names the config; the bounds' messages are Kafka's."""
    values = parse_values(GROUP_CONFIGS, configs)
    for name, value in values.items():
        if isinstance(value, int):
            _check_bounds(broker, name, value)
    for session, heartbeat in _SESSION_OVER_HEARTBEAT:
        if _effective_int(broker, values, session) <= _effective_int(broker, values, heartbeat):
            raise ConfigError(f"{session} must be greater than {heartbeat}")


def _check_bounds(broker: BrokerConfig, name: str, value: int) -> None:
    minimum, maximum = _BOUNDS.get(name, (None, None))
    if minimum is not None and value < _bound(broker, minimum):
        raise ConfigError(
            f"{name} must be greater than or equal to {minimum.key} ({_bound(broker, minimum)})"
        )
    if maximum is not None and value > _bound(broker, maximum):
        raise ConfigError(
            f"{name} must be less than or equal to {maximum.key} ({_bound(broker, maximum)})"
        )


def _bound(broker: BrokerConfig, bound: BrokerBound) -> int:
    return broker.get_int(bound.key) if bound.key in BROKER_CONFIGS else bound.kafka_default


def _effective_int(broker: BrokerConfig, values: Mapping[str, object], name: str) -> int:
    value = values[name] if name in values else default_value(broker, name)
    assert isinstance(value, int)
    return value


def default_sources(broker: BrokerConfig, name: str) -> list[tuple[str, ConfigSource, object]]:
    """Where group config ``name`` gets its value when the group sets none, most specific
    first, as Kafka's DescribeConfigs lists these synonyms: (key, source, value) of each
    layer of its broker key, or its own default where no broker key supplies it. A broker
    key Odradek does not have yet shows as its default (Kafka's)."""
    definition = GROUP_CONFIGS[name]
    key = definition.broker_synonym
    if key is None or key not in BROKER_CONFIGS:
        return [(key or name, ConfigSource.DEFAULT_CONFIG, definition.default)]
    return [(key, source, value) for source, value in broker.synonyms(key)]


def default_value(broker: BrokerConfig, name: str) -> object:
    """The value of group config ``name`` for a group that does not set it."""
    return default_sources(broker, name)[0][2]


@dataclass(frozen=True)
class GroupConfigs:
    """One group's dynamic configs, typed: what the rest of the broker reads.

    Get it from the metadata image every broker follows,
    ``store.image.configs_of_group(group_id)``. A getter for a config that a broker key
    supplies takes that key's value as ``default`` and returns the group's own value where
    the group sets one, e.g. ``configs.consumer_session_timeout_ms(
    config.consumer_session_timeout_ms)``; the others default to Kafka's defaults. Values
    were validated when they were set (IncrementalAlterConfigs, AlterConfigs).
    """

    values: Mapping[str, str] = field(default_factory=dict)

    def consumer_session_timeout_ms(self, default: int) -> int:
        return self._int("consumer.session.timeout.ms", default)

    def consumer_heartbeat_interval_ms(self, default: int) -> int:
        return self._int("consumer.heartbeat.interval.ms", default)

    def share_session_timeout_ms(self, default: int) -> int:
        return self._int("share.session.timeout.ms", default)

    def share_heartbeat_interval_ms(self, default: int) -> int:
        return self._int("share.heartbeat.interval.ms", default)

    def share_record_lock_duration_ms(self, default: int) -> int:
        return self._int("share.record.lock.duration.ms", default)

    def share_delivery_count_limit(self, default: int) -> int:
        return self._int("share.delivery.count.limit", default)

    def share_partition_max_record_locks(self, default: int) -> int:
        return self._int("share.partition.max.record.locks", default)

    def share_auto_offset_reset(self) -> ShareAutoOffsetReset:
        return parse_share_auto_offset_reset(str(self._value("share.auto.offset.reset")))

    def share_isolation_level(self) -> str:
        """``read_committed`` or ``read_uncommitted``."""
        return str(self._value("share.isolation.level"))

    def share_renew_acknowledge_enable(self) -> bool:
        return self._value("share.renew.acknowledge.enable") is True

    def _int(self, name: str, default: int) -> int:
        value = self._value(name, default)
        assert isinstance(value, int)
        return value

    def _value(self, name: str, default: object = None) -> object:
        """The group's value of ``name``, else ``default``, else Kafka's default."""
        definition = GROUP_CONFIGS[name]
        text = self.values.get(name)
        if text is not None:
            return parse_value(definition, text)
        return definition.default if default is None else default
