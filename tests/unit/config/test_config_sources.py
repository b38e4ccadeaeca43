"""Broker configuration: Kafka's names, three sources, errors that name the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.config.definitions import ConfigError
from odradek.broker.config.topic_config import TopicConfig, validate_topic_configs


def test_flags_beat_environment_which_beats_the_file(tmp_path: Path) -> None:
    properties = tmp_path / "server.properties"
    properties.write_text("# comment\nnum.partitions=2\nlog.segment.bytes=2048\nnode.id=4\n")
    config = BrokerConfig.load(
        properties,
        environ={"ODRADEK_NUM_PARTITIONS": "3", "ODRADEK_LOG_SEGMENT_BYTES": "4096"},
        overrides={"num.partitions": "5"},
    )
    assert config.get("num.partitions") == 5
    assert config.get("log.segment.bytes") == 4096
    assert config.node_id == 4


def test_defaults_apply_when_nothing_is_set() -> None:
    config = BrokerConfig.load(environ={})
    assert [str(item) for item in config.listeners] == ["PLAINTEXT://127.0.0.1:9092"]
    assert config.get("auto.create.topics.enable") is True


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("num.partitions", "abc", "num.partitions: 'abc' is not a whole number"),
        ("num.partitions", "0", "num.partitions: 0 is below the minimum 1"),
        ("log.segment.bytes", "-1", "log.segment.bytes"),
        ("queued.max.request.bytes", "1000", "queued.max.request.bytes: 1000 is below"),
        (
            "broker.session.timeout.ms",
            "2000",
            "broker.heartbeat.interval.ms: 2000 must be less than broker.session.timeout.ms",
        ),
        ("auto.create.topics.enable", "maybe", "auto.create.topics.enable"),
        ("listeners", "SSL://127.0.0.1:9093", "no advertised listener uses PLAINTEXT"),
        ("listeners", "nonsense", "listeners"),
        ("listeners", "127.0.0.1:9092", "listeners: '127.0.0.1:9092' is not NAME://host:port"),
        ("listeners", "PLAINTEXT://127.0.0.1:99999", "listeners"),
        ("http.listener", "127.0.0.1", "http.listener"),
        ("no.such.key", "1", "no.such.key: unknown configuration key"),
    ],
)
def test_bad_values_are_refused_naming_the_key(key: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        BrokerConfig.load(environ={}, overrides={key: value})


def test_broker_id_and_log_dir_are_accepted_as_aliases() -> None:
    config = BrokerConfig.load(environ={}, overrides={"broker.id": "3", "log.dir": "/data"})
    assert config.node_id == 3
    assert config.data_dir == Path("/data")


def test_topic_defaults_follow_broker_settings_by_kafka_precedence() -> None:
    broker = BrokerConfig.load(
        environ={}, overrides={"log.retention.hours": "2", "log.roll.ms": "1000"}
    )
    topic = TopicConfig(broker, {})
    assert topic.get("retention.ms") == 2 * 3_600_000
    assert topic.log_config().segment_ms == 1000
    broker = BrokerConfig.load(environ={}, overrides={"log.retention.minutes": "3"})
    assert TopicConfig(broker, {}).get("retention.ms") == 180_000


def test_topic_overrides_win_and_are_validated() -> None:
    broker = BrokerConfig.load(environ={})
    overrides = validate_topic_configs({"segment.bytes": "1048576", "cleanup.policy": "compact"})
    topic = TopicConfig(broker, overrides)
    assert topic.log_config().segment_bytes == 1048576
    assert topic.get("cleanup.policy") == ["compact"]
    with pytest.raises(ConfigError, match=r"cleanup\.policy"):
        validate_topic_configs({"cleanup.policy": "shred"})
    with pytest.raises(ConfigError, match=r"retention\.mss: unknown"):
        validate_topic_configs({"retention.mss": "1"})
