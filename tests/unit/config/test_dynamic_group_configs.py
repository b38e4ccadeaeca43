"""Group configs (Kafka's GROUP config resource): Kafka 4.3's keys, validated as Kafka
validates them (each refusal below was checked against a Kafka 4.3.1 broker; Odradek's own
words where its parser has them), their defaults' sources, and the typed view of a group's
values the rest of the broker reads."""

from __future__ import annotations

import pytest

from odradek.broker.config import dynamic_group_configs
from odradek.broker.config.broker_config import BrokerConfig, ConfigSource
from odradek.broker.config.definitions import BROKER_CONFIGS, ConfigDef, ConfigError, ConfigType
from odradek.broker.config.dynamic_group_configs import (
    GROUP_CONFIGS,
    GroupConfigs,
    default_sources,
    default_value,
    validate_group_configs,
)
from odradek.broker.config.share_auto_offset_reset import ResetStrategy, ShareAutoOffsetReset

BROKER = BrokerConfig.load(environ={})
# What `kafka-configs --describe --all --entity-type groups` lists on Kafka 4.3.1.
KAFKA_GROUP_CONFIGS = {
    "consumer.assignment.interval.ms", "consumer.heartbeat.interval.ms",
    "consumer.session.timeout.ms", "share.assignment.interval.ms", "share.auto.offset.reset",
    "share.delivery.count.limit", "share.heartbeat.interval.ms", "share.isolation.level",
    "share.partition.max.record.locks", "share.record.lock.duration.ms",
    "share.renew.acknowledge.enable", "share.session.timeout.ms",
    "streams.assignment.interval.ms", "streams.heartbeat.interval.ms",
    "streams.initial.rebalance.delay.ms", "streams.num.standby.replicas",
    "streams.session.timeout.ms",
}  # fmt: skip


def test_the_group_configs_are_kafkas() -> None:
    assert set(GROUP_CONFIGS) == KAFKA_GROUP_CONFIGS


def test_values_within_kafkas_bounds_are_accepted() -> None:
    validate_group_configs(
        {
            "consumer.session.timeout.ms": "50000",
            "consumer.heartbeat.interval.ms": " 15000",
            "share.auto.offset.reset": "by_duration:PT1H",
            "share.isolation.level": "read_committed",
            "share.renew.acknowledge.enable": "FALSE",
            "share.delivery.count.limit": "10",
            "streams.num.standby.replicas": "2",
        },
        BROKER,
    )


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("consumer.session.timeout.ms", "1000", "consumer.session.timeout.ms must be greater "
         "than or equal to group.consumer.min.session.timeout.ms (45000)"),
        ("consumer.session.timeout.ms", "60001", "consumer.session.timeout.ms must be less than "
         "or equal to group.consumer.max.session.timeout.ms (60000)"),
        ("consumer.heartbeat.interval.ms", "4999", "consumer.heartbeat.interval.ms must be "
         "greater than or equal to group.consumer.min.heartbeat.interval.ms (5000)"),
        ("consumer.session.timeout.ms", "abc", "consumer.session.timeout.ms: 'abc' is not a "
         "whole number"),
        ("consumer.session.timeout.ms", "0", "consumer.session.timeout.ms: 0 is below the "
         "minimum 1"),
        ("share.auto.offset.reset", "foo", "Invalid value `foo` for configuration "
         "share.auto.offset.reset."),
        ("share.auto.offset.reset", "by_duration:P-1D", "Invalid value `by_duration:P-1D` for "
         "configuration share.auto.offset.reset."),
        ("share.isolation.level", "x", "share.isolation.level: 'x' is not one of "
         "read_committed, read_uncommitted"),
        ("foo.bar", "1", "foo.bar: unknown configuration key"),
        ("share.delivery.count.limit", "11", "share.delivery.count.limit must be less than or "
         "equal to group.share.max.delivery.count.limit (10)"),
        ("streams.num.standby.replicas", "3", "streams.num.standby.replicas must be less than "
         "or equal to group.streams.max.standby.replicas (2)"),
        ("share.renew.acknowledge.enable", "maybe", "share.renew.acknowledge.enable: 'maybe' "
         "is not true or false"),
        ("share.record.lock.duration.ms", "999", "share.record.lock.duration.ms: 999 is below "
         "the minimum 1000"),
    ],
)  # fmt: skip
def test_bad_values_are_refused_naming_the_config(name: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as refused:
        validate_group_configs({name: value}, BROKER)
    assert str(refused.value).startswith(message)


def test_a_bound_the_broker_sets_replaces_kafkas_default(monkeypatch: pytest.MonkeyPatch) -> None:
    key = "group.consumer.min.session.timeout.ms"
    definition = ConfigDef(key, ConfigType.INT, 45000, "a bound")
    monkeypatch.setattr(
        dynamic_group_configs, "BROKER_CONFIGS", {**BROKER_CONFIGS, key: definition}
    )
    broker = BrokerConfig(values={key: 30000})

    validate_group_configs({"consumer.session.timeout.ms": "30000"}, broker)
    with pytest.raises(ConfigError, match=rf"{key} \(30000\)"):
        validate_group_configs({"consumer.session.timeout.ms": "29999"}, broker)


def test_a_session_timeout_must_stay_above_the_heartbeat_interval_the_broker_gives() -> None:
    broker = BrokerConfig.load(environ={}, overrides={"group.consumer.session.timeout.ms": "6000"})

    validate_group_configs({"consumer.heartbeat.interval.ms": "5999"}, broker)
    with pytest.raises(ConfigError) as refused:
        validate_group_configs({"consumer.heartbeat.interval.ms": "6000"}, broker)
    assert str(refused.value) == (
        "consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms"
    )


def test_a_broker_default_outside_kafkas_bounds_does_not_block_other_configs() -> None:
    broker = BrokerConfig.load(environ={}, overrides={"group.consumer.session.timeout.ms": "8000"})
    validate_group_configs({"share.auto.offset.reset": "earliest"}, broker)


def test_defaults_come_from_the_broker_key_in_kafkas_synonym_order() -> None:
    broker = BrokerConfig.load(environ={}, overrides={"group.consumer.session.timeout.ms": "8000"})
    key = "group.consumer.session.timeout.ms"

    assert default_sources(broker, "consumer.session.timeout.ms") == [
        (key, ConfigSource.STATIC_BROKER_CONFIG, 8000),
        (key, ConfigSource.DEFAULT_CONFIG, 45000),
    ]
    assert default_value(broker, "consumer.session.timeout.ms") == 8000
    assert default_sources(broker, "share.auto.offset.reset") == [
        ("share.auto.offset.reset", ConfigSource.DEFAULT_CONFIG, "latest")
    ]


def test_a_broker_key_odradek_lacks_shows_kafkas_default() -> None:
    assert "group.streams.session.timeout.ms" not in BROKER_CONFIGS
    assert default_sources(BROKER, "streams.session.timeout.ms") == [
        ("group.streams.session.timeout.ms", ConfigSource.DEFAULT_CONFIG, 45000)
    ]


def test_a_group_without_configs_reads_every_default() -> None:
    configs = GroupConfigs()
    assert configs.consumer_session_timeout_ms(8000) == 8000
    assert configs.consumer_heartbeat_interval_ms(3000) == 3000
    assert configs.share_record_lock_duration_ms(30000) == 30000
    assert configs.share_auto_offset_reset() == ShareAutoOffsetReset(ResetStrategy.LATEST)
    assert configs.share_isolation_level() == "read_uncommitted"
    assert configs.share_renew_acknowledge_enable() is True


def test_a_groups_own_values_win_typed() -> None:
    configs = GroupConfigs(
        {
            "consumer.session.timeout.ms": "50000",
            "consumer.heartbeat.interval.ms": "6000",
            "share.session.timeout.ms": "46000",
            "share.heartbeat.interval.ms": "7000",
            "share.record.lock.duration.ms": "20000",
            "share.delivery.count.limit": "3",
            "share.partition.max.record.locks": "500",
            "share.auto.offset.reset": "by_duration:P1D",
            "share.isolation.level": "read_committed",
            "share.renew.acknowledge.enable": "false",
        }
    )
    assert configs.consumer_session_timeout_ms(45000) == 50000
    assert configs.consumer_heartbeat_interval_ms(5000) == 6000
    assert configs.share_session_timeout_ms(45000) == 46000
    assert configs.share_heartbeat_interval_ms(5000) == 7000
    assert configs.share_record_lock_duration_ms(30000) == 20000
    assert configs.share_delivery_count_limit(5) == 3
    assert configs.share_partition_max_record_locks(2000) == 500
    assert configs.share_auto_offset_reset() == ShareAutoOffsetReset(
        ResetStrategy.BY_DURATION, 86_400_000
    )
    assert configs.share_isolation_level() == "read_committed"
    assert configs.share_renew_acknowledge_enable() is False
