"""Which broker configs change at run time: Kafka 4.x's dynamic keys that Odradek
implements; the static ones refused in Kafka's words, the unimplemented ones with why."""

from __future__ import annotations

import pytest

from odradek.broker.config.definitions import BROKER_CONFIGS, ConfigError
from odradek.broker.config.dynamic_configs import (
    unsupported_reason,
    validate_dynamic_broker_configs,
)

# Kafka 4.3.1's DynamicBrokerConfig.ALL_DYNAMIC_CONFIGS, less the security keys (ssl.*,
# sasl.*), the tiered-storage keys (remote.*) and those Odradek refuses by name.
KAFKA_DYNAMIC_CONFIGS_ODRADEK_IMPLEMENTS = {
    "compression.gzip.level", "compression.lz4.level", "compression.type",
    "compression.zstd.level", "follower.replication.throttled.rate",
    "leader.replication.throttled.rate", "log.cleaner.backoff.ms",
    "log.cleaner.delete.retention.ms", "log.cleaner.max.compaction.lag.ms",
    "log.cleaner.min.cleanable.ratio", "log.cleaner.min.compaction.lag.ms",
    "log.cleanup.policy", "log.flush.interval.messages", "log.flush.interval.ms",
    "log.index.interval.bytes", "log.index.size.max.bytes", "log.local.retention.bytes",
    "log.local.retention.ms", "log.message.timestamp.after.max.ms",
    "log.message.timestamp.before.max.ms", "log.message.timestamp.type", "log.preallocate",
    "log.retention.bytes", "log.retention.ms", "log.roll.jitter.ms", "log.roll.ms",
    "log.segment.bytes", "log.segment.delete.delay.ms", "max.connection.creation.rate",
    "max.connections", "max.connections.per.ip", "max.connections.per.ip.overrides",
    "message.max.bytes", "min.insync.replicas", "unclean.leader.election.enable",
    "transaction.partition.verification.enable",
}  # fmt: skip


def test_the_dynamic_keys_are_kafkas_that_odradek_implements() -> None:
    dynamic = {name for name, definition in BROKER_CONFIGS.items() if definition.dynamic}

    assert dynamic == KAFKA_DYNAMIC_CONFIGS_ODRADEK_IMPLEMENTS
    assert not [name for name in dynamic if unsupported_reason(name) is not None]


def test_dynamic_values_are_accepted_and_validated() -> None:
    validate_dynamic_broker_configs(
        {"log.cleaner.backoff.ms": "200", "leader.replication.throttled.rate": "1000"}
    )
    with pytest.raises(ConfigError, match=r"log\.cleaner\.backoff\.ms: 'soon' is not a whole"):
        validate_dynamic_broker_configs({"log.cleaner.backoff.ms": "soon"})


def test_a_listeners_own_connection_limits_change_at_run_time() -> None:
    validate_dynamic_broker_configs(
        {
            "listener.name.external.max.connections": "100",
            "listener.name.external.max.connection.creation.rate": "10",
            "max.connections.per.ip.overrides": "localhost:5,10.0.0.7:0,[::1]:3",
        }
    )
    with pytest.raises(ConfigError, match=r"^listener\.name\.external\.max\.connections: -1"):
        validate_dynamic_broker_configs({"listener.name.external.max.connections": "-1"})
    with pytest.raises(ConfigError, match=r"^max\.connections\.per\.ip\.overrides: 'h:x' is"):
        validate_dynamic_broker_configs({"max.connections.per.ip.overrides": "h:1,h:x"})


@pytest.mark.parametrize(
    ("configs", "message"),
    [
        ({"num.partitions": "3"}, "Cannot update these configs dynamically: [num.partitions]"),
        (
            {"log.retention.hours": "1", "log.dirs": "/x", "message.max.bytes": "10"},
            "Cannot update these configs dynamically: [log.dirs, log.retention.hours]",
        ),
        ({"no.such.key": "1"}, "no.such.key: unknown configuration key"),
        ({"ssl.keystore.location": "/k"}, "ssl.keystore.location: Odradek's TLS and SASL"),
        (
            {"listener.name.plaintext.sasl.jaas.config": "x"},
            "listener.name.plaintext.sasl.jaas.config: Odradek's TLS and SASL settings are static",
        ),
        ({"listeners": "PLAINTEXT://:9093"}, "listeners: Odradek binds its listeners when"),
        ({"remote.log.reader.threads": "2"}, "remote.log.reader.threads: Odradek has no tiered"),
        ({"num.io.threads": "16"}, "num.io.threads: Odradek serves a broker on one asyncio"),
    ],
)
def test_keys_that_cannot_change_at_run_time_are_refused_saying_why(
    configs: dict[str, str], message: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        validate_dynamic_broker_configs(configs)

    assert str(refused.value).startswith(message)


def test_only_kafkas_unimplemented_dynamic_keys_have_a_reason() -> None:
    assert unsupported_reason("sasl.enabled.mechanisms") is not None
    assert unsupported_reason("num.network.threads") is not None
    assert unsupported_reason("message.max.bytes") is None
    assert unsupported_reason("no.such.key") is None
