"""Group configs (Kafka's GROUP config resource) through Apache Kafka's own `kafka-configs`,
judged on what it prints: set, described (as a Kafka 4.3.1 broker describes them), refused
when invalid, kept across a restart, deleted; on a 3-broker cluster, set through one broker
and described through another."""

from __future__ import annotations

import pytest
from broker_process import Broker, BrokerFactory, unique_name
from cluster_harness import ClusterFactory
from kafka_tools import kafka_tool, run_kafka_tool

pytestmark = pytest.mark.slow

SET = "consumer.session.timeout.ms=50000,share.auto.offset.reset=earliest"
# What `kafka-configs --describe` prints for a group with SET on a Kafka 4.3.1 broker.
DESCRIBED = [
    "  consumer.session.timeout.ms=50000 sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:"
    "consumer.session.timeout.ms=50000, DEFAULT_CONFIG:group.consumer.session.timeout.ms=45000}",
    "  share.auto.offset.reset=earliest sensitive=false synonyms={DYNAMIC_GROUP_CONFIG:"
    "share.auto.offset.reset=earliest, DEFAULT_CONFIG:share.auto.offset.reset=latest}",
]
# ... and with --all, the group's configs among every other at its default.
DEFAULTS = [
    ("consumer.assignment.interval.ms", "group.consumer.assignment.interval.ms", 1000),
    ("consumer.heartbeat.interval.ms", "group.consumer.heartbeat.interval.ms", 5000),
    ("share.assignment.interval.ms", "group.share.assignment.interval.ms", 1000),
    ("share.delivery.count.limit", "group.share.delivery.count.limit", 5),
    ("share.heartbeat.interval.ms", "group.share.heartbeat.interval.ms", 5000),
    ("share.isolation.level", "share.isolation.level", "read_uncommitted"),
    ("share.partition.max.record.locks", "group.share.partition.max.record.locks", 2000),
    ("share.record.lock.duration.ms", "group.share.record.lock.duration.ms", 30000),
    ("share.renew.acknowledge.enable", "share.renew.acknowledge.enable", "true"),
    ("share.session.timeout.ms", "group.share.session.timeout.ms", 45000),
    ("streams.assignment.interval.ms", "group.streams.assignment.interval.ms", 1000),
    ("streams.heartbeat.interval.ms", "group.streams.heartbeat.interval.ms", 5000),
    ("streams.initial.rebalance.delay.ms", "group.streams.initial.rebalance.delay.ms", 3000),
    ("streams.num.standby.replicas", "group.streams.num.standby.replicas", 0),
    ("streams.session.timeout.ms", "group.streams.session.timeout.ms", 45000),
]
DESCRIBED_ALL = sorted(
    [
        *DESCRIBED,
        *(
            f"  {name}={value} sensitive=false synonyms={{DEFAULT_CONFIG:{key}={value}}}"
            for name, key, value in DEFAULTS
        ),
    ]
)


def configs(bootstrap: str, group: str, *arguments: str) -> str:
    return kafka_tool(
        "kafka-configs", "--bootstrap-server", bootstrap, "--entity-type", "groups",
        "--entity-name", group, *arguments,
    )  # fmt: skip


def refusal(bootstrap: str, group: str, setting: str) -> str:
    """What `kafka-configs` prints when the broker refuses ``setting``."""
    done = run_kafka_tool(
        "kafka-configs", "--bootstrap-server", bootstrap, "--entity-type", "groups",
        "--entity-name", group, "--alter", "--add-config", setting,
    )  # fmt: skip
    assert done.returncode == 1, done.stdout
    return done.stderr


def test_kafka_configs_sets_describes_and_deletes_a_groups_configs_kept_across_a_restart(
    broker_factory: BrokerFactory,
) -> None:
    broker: Broker = broker_factory()
    group = unique_name("orders")
    altered = configs(broker.bootstrap, group, "--alter", "--add-config", SET)
    described = configs(broker.bootstrap, group, "--describe")
    described_all = configs(broker.bootstrap, group, "--describe", "--all")
    too_short = refusal(broker.bootstrap, group, "consumer.session.timeout.ms=1000")
    unknown_reset = refusal(broker.bootstrap, group, "share.auto.offset.reset=soonest")

    broker.restart()
    after_restart = configs(broker.bootstrap, group, "--describe")
    configs(broker.bootstrap, group, "--alter", "--delete-config",
            "consumer.session.timeout.ms,share.auto.offset.reset")  # fmt: skip
    after_delete = configs(broker.bootstrap, group, "--describe")

    assert altered.strip() == f"Completed updating config for group {group}."
    assert described.splitlines() == [f"Dynamic configs for group {group} are:", *DESCRIBED]
    assert described_all.splitlines() == [f"All configs for group {group} are:", *DESCRIBED_ALL]
    assert (
        "InvalidConfigurationException: consumer.session.timeout.ms must be greater than or "
        "equal to group.consumer.min.session.timeout.ms" in too_short
    )
    assert (
        "InvalidConfigurationException: Invalid value `soonest` for configuration "
        "share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the "
        "format 'by_duration:<PnDTnHnMn.nS>'." in unknown_reset
    )
    assert after_restart == described
    assert after_delete.splitlines() == [f"Dynamic configs for group {group} are:"]


def test_a_group_config_set_through_one_broker_is_described_through_another(
    cluster_factory: ClusterFactory,
) -> None:
    cluster = cluster_factory(brokers=3)
    group = unique_name("orders")
    first, third = (cluster.brokers[node].bootstrap for node in (0, 2))

    configs(first, group, "--alter", "--add-config", SET)
    described = configs(third, group, "--describe")
    configs(third, group, "--alter", "--delete-config", "share.auto.offset.reset")
    after_delete = configs(first, group, "--describe")

    assert described.splitlines() == [f"Dynamic configs for group {group} are:", *DESCRIBED]
    assert after_delete.splitlines() == [f"Dynamic configs for group {group} are:", DESCRIBED[0]]
