"""Apache Kafka's own command-line tools against one Odradek broker, each judged on what it
prints: topics with every Kafka topic config, grown and deleted, internal topics, feature
levels, offsets by every time spec, consumer groups (members, every reset spec), API
versions, topic config synonyms and dynamic broker configs."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from broker_process import Broker, BrokerFactory, unique_name
from confluent_kafka import Consumer, Producer
from kafka_tools import kafka_tool, run_kafka_tool
from kafka_wire import WireClient, build_batch
from mirror_harness import FAST_GROUP_SESSION, consume_in_group, create_topic, produce, wait_until

from odradek.broker.group.group_partition import OFFSETS_TOPIC

pytestmark = pytest.mark.slow

# A value other than the default for every topic config of Kafka 4.x.
EVERY_TOPIC_CONFIG = {
    "cleanup.policy": "compact",
    "compression.type": "zstd",
    "compression.gzip.level": "5",
    "compression.lz4.level": "10",
    "compression.zstd.level": "7",
    "delete.retention.ms": "3600000",
    "file.delete.delay.ms": "30000",
    "flush.messages": "100000",
    "flush.ms": "60000",
    "follower.replication.throttled.replicas": "*",
    "index.interval.bytes": "8192",
    "leader.replication.throttled.replicas": "*",
    "local.retention.bytes": "1073741824",
    "local.retention.ms": "3600000",
    "max.compaction.lag.ms": "86400000",
    "max.message.bytes": "2000000",
    "message.timestamp.after.max.ms": "7200000",
    "message.timestamp.before.max.ms": "86400000000",
    "message.timestamp.type": "LogAppendTime",
    "min.cleanable.dirty.ratio": "0.3",
    "min.compaction.lag.ms": "1000",
    "min.insync.replicas": "1",
    "preallocate": "true",
    "remote.log.copy.disable": "true",
    "remote.log.delete.on.disable": "true",
    "remote.storage.enable": "false",
    "retention.bytes": "2147483648",
    "retention.ms": "86400000",
    "segment.bytes": "536870912",
    "segment.index.bytes": "5242880",
    "segment.jitter.ms": "1000",
    "segment.ms": "3600000",
    "unclean.leader.election.enable": "true",
}


def server(broker: Broker) -> tuple[str, str]:
    return ("--bootstrap-server", broker.bootstrap)


def test_kafka_topics_creates_and_describes_a_topic_with_every_kafka_topic_config(
    broker: Broker,
) -> None:
    name = unique_name("every-config")
    settings = [
        arg for key, value in EVERY_TOPIC_CONFIG.items() for arg in ("--config", f"{key}={value}")
    ]

    created = kafka_tool(
        "kafka-topics",
        *server(broker),
        "--create",
        "--topic",
        name,
        "--partitions",
        "3",
        "--replication-factor",
        "1",
        *settings,
    )
    described = kafka_tool("kafka-topics", *server(broker), "--describe", "--topic", name)

    assert f"Created topic {name}." in created
    header, *partitions = described.strip().splitlines()
    fields = dict(field.split(": ", 1) for field in header.split("\t") if field)
    assert (fields["Topic"], fields["PartitionCount"], fields["ReplicationFactor"]) == (
        name,
        "3",
        "1",
    )
    configs = dict(item.split("=", 1) for item in fields["Configs"].split(","))
    assert configs == EVERY_TOPIC_CONFIG
    assert [line.split("\t")[2] for line in partitions] == [f"Partition: {i}" for i in range(3)]
    assert all("Leader: 0" in line and "Isr: 0" in line for line in partitions)


def test_kafka_topics_is_refused_tiered_storage_with_a_sentence_naming_it(broker: Broker) -> None:
    done = run_kafka_tool(
        "kafka-topics",
        *server(broker),
        "--create",
        "--topic",
        unique_name("tiered"),
        "--config",
        "remote.storage.enable=true",
    )

    assert done.returncode != 0
    assert "remote.storage.enable: tiered storage is not available" in done.stdout + done.stderr


def test_kafka_topics_lists_internal_topics_unless_excluded_and_finds_no_unhealthy_ones(
    broker: Broker,
) -> None:
    with WireClient.to(broker.bootstrap) as wire:
        wire.metadata([OFFSETS_TOPIC], auto_create=True)

    listed = kafka_tool("kafka-topics", *server(broker), "--list").split()
    external = kafka_tool("kafka-topics", *server(broker), "--list", "--exclude-internal").split()

    assert OFFSETS_TOPIC in listed and OFFSETS_TOPIC not in external
    for health_filter in (
        "--under-replicated-partitions",
        "--unavailable-partitions",
        "--under-min-isr-partitions",
    ):
        assert kafka_tool("kafka-topics", *server(broker), "--describe", health_filter) == ""
    # one broker, min.insync.replicas 1: every partition is at its minimum ISR
    at_min = kafka_tool("kafka-topics", *server(broker), "--describe", "--at-min-isr-partitions")
    assert f"\tTopic: {OFFSETS_TOPIC}\tPartition: 49\tLeader: 0\t" in at_min
    described = kafka_tool("kafka-topics", *server(broker), "--describe", "--topic", OFFSETS_TOPIC)
    assert "PartitionCount: 50" in described.splitlines()[0]


def test_kafka_features_describes_the_finalized_features(broker: Broker) -> None:
    described = kafka_tool("kafka-features", *server(broker), "describe")

    assert [line.split() for line in described.strip().splitlines()] == [
        ["Feature:", "group.version", "SupportedMinVersion:", "0",
         "SupportedMaxVersion:", "1", "FinalizedVersionLevel:", "1", "Epoch:", "0"],
        ["Feature:", "metadata.version", "SupportedMinVersion:", "3.3-IV3",
         "SupportedMaxVersion:", "4.0-IV3", "FinalizedVersionLevel:", "4.0-IV3", "Epoch:", "0"],
        ["Feature:", "share.version", "SupportedMinVersion:", "0",
         "SupportedMaxVersion:", "1", "FinalizedVersionLevel:", "1", "Epoch:", "0"],
        ["Feature:", "transaction.version", "SupportedMinVersion:", "0",
         "SupportedMaxVersion:", "2", "FinalizedVersionLevel:", "2", "Epoch:", "0"],
    ]  # fmt: skip


def test_kafka_features_upgrades_to_the_finalized_level_and_refuses_any_other(
    broker: Broker,
) -> None:
    upgraded = kafka_tool("kafka-features", *server(broker), "upgrade", "--metadata", "4.0-IV3")
    assert "metadata.version was upgraded to 25." in upgraded
    for action, release, level in (("upgrade", "4.1-IV0", 26), ("downgrade", "3.9-IV0", 21)):
        refused = run_kafka_tool("kafka-features", *server(broker), action, "--metadata", release)
        assert refused.returncode == 1
        assert f"Could not {action} metadata.version to {level}." in refused.stdout
        assert f"finalized at level 25 on Odradek and cannot change to {level}" in refused.stdout


def test_kafka_transactions_describes_an_idempotent_producer(broker: Broker) -> None:
    topic = unique_name("producers")
    producer = Producer({"bootstrap.servers": broker.bootstrap, "enable.idempotence": True})
    for i in range(5):
        producer.produce(topic, b"%d" % i, partition=0)
    assert producer.flush(30) == 0

    described = kafka_tool(
        "kafka-transactions", *server(broker), "describe-producers", "--topic", topic,
        "--partition", "0",
    )  # fmt: skip

    header, row = (line.split() for line in described.strip().splitlines())
    assert header[:4] == ["ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence"]
    assert row[1:4] == ["0", "-1", "4"]  # epoch 0, no transaction, sequences 0..4
    assert row[5] == "None"  # no open transaction


def test_kafka_get_offsets_answers_every_time_spec(broker: Broker) -> None:
    topic = unique_name("offsets")
    kafka_tool("kafka-topics", *server(broker), "--create", "--topic", topic, "--partitions", "1")
    base = int(time.time() * 1000) - 60_000
    stamps = [base, base + 10, base + 30, base + 20]  # the newest is at offset 2
    produce(broker, topic, [{"value": b"v", "timestamp": stamp} for stamp in stamps])

    def offset(time_spec: str) -> str:
        out = kafka_tool(
            "kafka-get-offsets", *server(broker), "--topic", topic, "--time", time_spec
        )
        return out.strip()

    assert offset("latest") == offset("-1") == f"{topic}:0:4"
    assert offset("earliest") == offset("-2") == offset("-4") == f"{topic}:0:0"
    assert offset("max-timestamp") == offset("-3") == f"{topic}:0:2"
    assert offset(str(base + 15)) == f"{topic}:0:2"
    assert offset(str(base + 31)) == ""  # no record that late: Kafka prints nothing
    assert offset("-5") == ""  # latest tiered: no tiered storage, no offset


def test_kafka_consumer_groups_lists_classic_groups_by_type_and_describes_them(
    broker: Broker,
) -> None:
    topic, group = unique_name("grouped"), unique_name("group")
    produce(broker, topic, [{"value": b"%d" % i} for i in range(3)])
    assert len(consume_in_group(broker, group, topic, at_least=3)) == 3

    typed = kafka_tool("kafka-consumer-groups", *server(broker), "--list", "--type")
    rows = [line.split() for line in typed.splitlines()]
    described = kafka_tool("kafka-consumer-groups", *server(broker), "--describe", "--group", group)

    assert rows[0] == ["GROUP", "TYPE"] and [group, "Classic"] in rows
    consumer_type = kafka_tool(
        "kafka-consumer-groups", *server(broker), "--list", "--type", "consumer"
    )
    assert consumer_type.split() == ["GROUP", "TYPE"]  # a header, no consumer-protocol group
    line = next(line.split() for line in described.splitlines() if line.startswith(group))
    assert line[1:5] == [topic, "0", "3", "3"]  # topic, partition, committed, log end


def test_kafka_broker_api_versions_shows_the_newer_apis_usable(broker: Broker) -> None:
    listed = kafka_tool("kafka-broker-api-versions", *server(broker))

    for api in (
        "ListOffsets(2): 1 to 11",
        "ListGroups(16): 0 to 5",
        "DescribeCluster(60): 0 to 2",
        "DescribeTopicPartitions(75): 0 [usable: 0]",
    ):
        assert api in listed


def test_kafka_configs_shows_retention_ms_with_kafkas_synonyms(broker: Broker) -> None:
    topic = unique_name("synonyms")
    kafka_tool("kafka-topics", *server(broker), "--create", "--topic", topic)

    described = kafka_tool(
        "kafka-configs",
        *server(broker),
        "--describe",
        "--entity-type",
        "topics",
        "--entity-name",
        topic,
        "--all",
    )

    assert (
        "retention.ms=604800000 sensitive=false synonyms={DEFAULT_CONFIG:log.retention.hours=168}"
        in described
    )


def test_kafka_configs_lists_and_changes_broker_logger_levels_at_run_time(broker: Broker) -> None:
    loggers = ("--entity-type", "broker-loggers", "--entity-name", "0")
    handlers = "odradek.broker.server.handlers.errors"

    def levels() -> dict[str, str]:
        described = kafka_tool("kafka-configs", *server(broker), "--describe", *loggers)
        entries = [line.split()[0] for line in described.splitlines() if line.startswith("  ")]
        return dict(entry.split("=", 1) for entry in entries)

    before = levels()
    kafka_tool(
        "kafka-configs", *server(broker), "--alter", *loggers, "--add-config", f"{handlers}=TRACE"
    )
    changed = levels()
    kafka_tool("kafka-configs", *server(broker), "--alter", *loggers, "--delete-config", handlers)
    refused = run_kafka_tool(
        "kafka-configs", *server(broker), "--alter", *loggers, "--add-config", f"{handlers}=LOUD"
    )

    assert before["root"] == before[handlers] == "INFO"
    assert changed[handlers] == "TRACE" and changed["root"] == "INFO"
    assert levels()[handlers] == "INFO"
    assert refused.returncode != 0 and "'LOUD' is not a level" in refused.stdout + refused.stderr


def test_kafka_topics_describes_every_partition_across_response_pages(broker: Broker) -> None:
    names = sorted(unique_name("paged") for _ in range(2))
    for name in names:
        kafka_tool(
            "kafka-topics", *server(broker), "--create", "--topic", name, "--partitions", "5"
        )

    described = kafka_tool(
        "kafka-topics",
        *server(broker),
        "--describe",
        "--topic",
        "paged.*",
        "--partition-size-limit-per-response",
        "2",
    )

    rows = [line.split("\t") for line in described.splitlines() if line.startswith("\tTopic:")]
    assert sorted((row[1], row[2]) for row in rows) == [
        (f"Topic: {name}", f"Partition: {p}") for name in names for p in range(5)
    ]


def test_kafka_log_dirs_describes_the_log_directory_with_each_replicas_size(broker: Broker) -> None:
    topic = unique_name("sized")
    kafka_tool("kafka-topics", *server(broker), "--create", "--topic", topic, "--partitions", "2")
    produce(broker, topic, [{"value": b"x" * 1000, "partition": 0} for _ in range(10)])

    described = kafka_tool("kafka-log-dirs", *server(broker), "--describe", "--topic-list", topic)

    report = json.loads(described.strip().splitlines()[-1])
    [(node, [log_dir])] = [(b["broker"], b["logDirs"]) for b in report["brokers"]]
    assert (node, log_dir["error"]) == (0, None)
    assert log_dir["logDir"] == str(broker.data_dir.resolve())
    sizes = {
        p["partition"]: (p["size"], p["offsetLag"], p["isFuture"]) for p in log_dir["partitions"]
    }
    assert sizes[f"{topic}-1"] == (0, 0, False)
    assert sizes[f"{topic}-0"][0] > 10_000 and sizes[f"{topic}-0"][1:] == (0, False)
    assert set(sizes) == {f"{topic}-0", f"{topic}-1"}


def test_kafka_consumer_groups_resets_deletes_offsets_and_deletes_an_empty_group(
    broker: Broker,
) -> None:
    topic, group = unique_name("managed"), unique_name("managed-group")
    produce(broker, topic, [{"value": b"%d" % i} for i in range(5)])
    assert len(consume_in_group(broker, group, topic, at_least=5)) == 5
    groups = ("kafka-consumer-groups", *server(broker), "--group", group)

    def rows(output: str) -> list[list[str]]:
        return [line.split() for line in output.splitlines() if line.startswith(group)]

    state = kafka_tool(*groups, "--describe", "--state")
    reset = kafka_tool(*groups, "--topic", topic, "--reset-offsets", "--to-offset", "2",
                       "--execute")  # fmt: skip
    described = kafka_tool(*groups, "--describe", "--offsets")
    offsets_deleted = kafka_tool(*groups, "--delete-offsets", "--topic", topic)
    deleted = kafka_tool(*groups, "--delete")

    assert rows(state)[0][-2:] == ["Empty", "0"]  # state, members
    assert rows(reset) == [[group, topic, "0", "2"]]
    assert rows(described)[0][1:4] == [topic, "0", "2"]
    assert f"Request succeeded for deleting offsets from group {group}." in offsets_deleted
    assert [topic, "0", "Successful"] in [line.split() for line in offsets_deleted.splitlines()]
    assert f"Deletion of requested consumer groups ('{group}') was successful." in deleted
    listed = kafka_tool("kafka-consumer-groups", *server(broker), "--list").split()
    assert group not in listed


def test_kafka_console_producer_and_consumer_carry_keyed_lines(broker: Broker) -> None:
    topic = unique_name("console")
    lines = [f"key-{i}:value {i}" for i in range(5)]
    keyed = ("--reader-property", "parse.key=true", "--reader-property", "key.separator=:")

    kafka_tool("kafka-console-producer", *server(broker), "--topic", topic, *keyed,
               stdin="\n".join(lines) + "\n")  # fmt: skip
    consumed = kafka_tool("kafka-console-consumer", *server(broker), "--topic", topic,
                          "--from-beginning", "--max-messages", "5", "--formatter-property",
                          "print.key=true", "--formatter-property", "key.separator=:")  # fmt: skip

    assert consumed.splitlines() == lines


def test_kafka_verifiable_producer_and_consumer_account_for_every_record(broker: Broker) -> None:
    topic, group = unique_name("verifiable"), unique_name("verifiable-group")

    produced = kafka_tool("kafka-verifiable-producer", *server(broker), "--topic", topic,
                          "--max-messages", "200", "--acks", "-1")  # fmt: skip
    consumed = kafka_tool("kafka-verifiable-consumer", *server(broker), "--topic", topic,
                          "--group-id", group, "--max-messages", "200")  # fmt: skip

    events = [json.loads(line) for line in produced.splitlines() if line.startswith("{")]
    summary = next(e for e in events if e["name"] == "tool_data")
    assert (summary["sent"], summary["acked"]) == (200, 200)
    events = [json.loads(line) for line in consumed.splitlines() if line.startswith("{")]
    assert sum(e["count"] for e in events if e["name"] == "records_consumed") == 200
    commits = [e for e in events if e["name"] == "offsets_committed"]
    assert commits and all(e["success"] for e in commits)
    assert commits[-1]["offsets"] == [{"topic": topic, "partition": 0, "offset": 200}]


def test_kafkas_client_compatibility_test_passes(broker: Broker) -> None:
    checked = kafka_tool(
        "client-compatibility-test", *server(broker), "--topic", unique_name("compatibility"),
        "--offsets-for-times-supported", "true", "--cluster-id-supported", "true",
        "--expect-record-too-large-exception", "false", "--num-cluster-nodes", "1",
        "--create-topics-supported", "true", "--describe-configs-supported", "true",
        "--idempotent-producer-supported", "true",
        # served; without an authorizer the answer is SECURITY_DISABLED, which the tool accepts
        "--describe-acls-supported", "true",
    )  # fmt: skip

    assert checked.strip().splitlines()[-1] == "SUCCESS."


def test_kafka_topics_adds_partitions_refuses_fewer_and_deletes_the_topic(broker: Broker) -> None:
    name = unique_name("grown")
    topics = ("kafka-topics", *server(broker))
    kafka_tool(*topics, "--create", "--topic", name, "--partitions", "2")

    kafka_tool(*topics, "--alter", "--topic", name, "--partitions", "4")
    described = kafka_tool(*topics, "--describe", "--topic", name)
    produce(broker, name, [{"value": b"into partition 3", "partition": 3}])
    offsets = kafka_tool("kafka-get-offsets", *server(broker), "--topic", name)
    fewer = run_kafka_tool(*topics, "--alter", "--topic", name, "--partitions", "3")
    kafka_tool(*topics, "--delete", "--topic", name)
    listed = kafka_tool(*topics, "--list").split()

    header, *partitions = described.strip().splitlines()
    assert "\tPartitionCount: 4\t" in header
    assert [line.split("\t")[2] for line in partitions] == [f"Partition: {i}" for i in range(4)]
    assert all("\tLeader: 0\t" in line for line in partitions)
    assert offsets.split() == [f"{name}:0:0", f"{name}:1:0", f"{name}:2:0", f"{name}:3:1"]
    assert fewer.returncode == 1 and (
        f"The topic {name} currently has 4 partition(s); 3 would not be an increase."
        in fewer.stdout
    )
    assert name not in listed


def test_kafka_consumer_groups_describes_an_active_member_and_refuses_to_reset_its_group(
    broker: Broker,
) -> None:
    topic, group = unique_name("membered"), unique_name("active-group")
    create_topic(broker, topic, 2)
    produce(broker, topic, [{"value": b"%d" % i, "partition": i % 2} for i in range(6)])
    groups = ("kafka-consumer-groups", *server(broker), "--group", group)
    member = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group,
                       "client.id": "the-member", "auto.offset.reset": "earliest",
                       **FAST_GROUP_SESSION})  # fmt: skip
    member.subscribe([topic])
    try:
        records, deadline = [], time.monotonic() + 30
        while len(records) < 6:
            assert time.monotonic() < deadline, f"read {len(records)} of 6 records"
            records += member.consume(6, 1.0)
        member.commit(asynchronous=False)
        members = kafka_tool(*groups, "--describe", "--members", "--verbose")
        state = kafka_tool(*groups, "--describe", "--state")
        offsets = kafka_tool(*groups, "--describe", "--offsets")
        refused = run_kafka_tool(*groups, "--reset-offsets", "--topic", topic, "--to-earliest",
                                 "--execute")  # fmt: skip
    finally:
        member.close()

    [row] = [line.split() for line in members.splitlines() if line.startswith(group)]
    # client id, partitions, current epoch, assignment, target epoch and assignment (none:
    # a classic group)
    assert row[3:] == ["the-member", "2", "-", f"{topic}:0,1", "-", "-"]
    assert row[1].startswith("the-member-") and row[2].startswith("/127.0.0.1")
    [row] = [line.split() for line in state.splitlines() if line.startswith(group)]
    assert row[-3:] == ["range", "Stable", "1"]  # assignment strategy, state, members
    rows = [line.split() for line in offsets.splitlines() if line.startswith(group)]
    assert sorted(r[2] for r in rows) == ["0", "1"]
    assert all(r[5] == "0" and r[8] == "the-member" for r in rows)  # no lag, its client id
    assert (
        f"Assignments can only be reset if the group '{group}' is inactive, but the current "
        "state is Stable." in refused.stdout + refused.stderr
    )


def test_kafka_consumer_groups_resets_offsets_by_every_spec(broker: Broker, tmp_path: Path) -> None:
    topic, group = unique_name("rewound"), unique_name("rewound-group")
    now_ms = int(time.time() * 1000)
    # record i: (10 - i) * 10 minutes ago, so --by-duration (from the tool's own now) keeps
    # the answer while the JVM tools before it take up to 5 minutes on a loaded machine
    minutes_ago = [now_ms - (10 - i) * 600_000 for i in range(10)]
    produce(
        broker, topic, [{"value": b"%d" % i, "timestamp": t} for i, t in enumerate(minutes_ago)]
    )
    groups = ("kafka-consumer-groups", *server(broker), "--group", group)

    def reset(*spec: str) -> list[list[str]]:
        printed = kafka_tool(*groups, "--topic", topic, "--reset-offsets", *spec)
        return [line.split()[1:] for line in printed.splitlines() if line.startswith(group)]

    between_2_and_3 = datetime.fromtimestamp((minutes_ago[2] + 300_000) / 1000, UTC)

    # A group that does not exist yet gets its offsets from the first --execute.
    assert reset("--to-latest", "--execute") == [[topic, "0", "10"]]
    assert reset("--to-earliest", "--dry-run") == [[topic, "0", "0"]]
    assert reset("--to-current", "--dry-run") == [[topic, "0", "10"]]  # the dry run kept 10
    assert reset("--shift-by", "-3", "--execute") == [[topic, "0", "7"]]
    assert reset("--to-datetime", between_2_and_3.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                 "--dry-run") == [[topic, "0", "3"]]  # fmt: skip
    assert reset("--by-duration", "PT55M", "--dry-run") == [[topic, "0", "5"]]
    # Plan with a dry run exported as CSV, then apply the plan from the file.
    exported = kafka_tool(*groups, "--topic", topic, "--reset-offsets", "--to-offset", "6",
                          "--dry-run", "--export")  # fmt: skip
    assert exported.split() == [f'"{topic}",0,6']  # Kafka's CSV quotes names with a dash
    plan = tmp_path / "offsets.csv"
    plan.write_text(exported)
    from_file = kafka_tool(*groups, "--reset-offsets", "--from-file", str(plan), "--execute")
    described = kafka_tool(*groups, "--describe", "--offsets")

    assert [line.split()[1:4] for line in from_file.splitlines() if line.startswith(group)] == [
        [topic, "0", "6"]
    ]
    [row] = [line.split() for line in described.splitlines() if line.startswith(group)]
    assert row[1:6] == [topic, "0", "6", "10", "4"]  # committed, log end, lag


def test_kafka_configs_sets_dynamic_broker_configs_per_broker_and_cluster_wide(
    broker_factory: BrokerFactory,
) -> None:
    # Static values: the cleaner would pause for 10 minutes, then keep new records an hour.
    broker = broker_factory(
        settings={
            "log.cleaner.backoff.ms": "600000",
            "log.cleaner.min.compaction.lag.ms": "3600000",
        }
    )
    configs = ("kafka-configs", *server(broker))
    this_broker = ("--entity-type", "brokers", "--entity-name", "0")
    cluster_wide = ("--entity-type", "brokers", "--entity-default")
    compacted, plain = unique_name("compacted"), unique_name("plain")
    create_topic(broker, compacted, 1, **{"cleanup.policy": "compact", "segment.bytes": "2048",
                                          "min.cleanable.dirty.ratio": "0.01"})  # fmt: skip
    create_topic(broker, plain, 1)
    for _ in range(10):  # ten updates of five keys, in batches smaller than a segment
        produce(broker, compacted, [{"key": b"k%d" % k, "value": b"v" * 100} for k in range(5)])
    assert produce_error(broker, plain, 1_500_000) == "message_too_large"

    defaults = "log.cleaner.backoff.ms=300000,message.max.bytes=2000000"
    kafka_tool(*configs, "--alter", *cluster_wide, "--add-config", defaults)
    kafka_tool(*configs, "--alter", *this_broker, "--add-config", "log.cleaner.backoff.ms=200")
    kafka_tool(*configs, "--alter", *cluster_wide,
               "--add-config", "log.cleaner.min.compaction.lag.ms=0")  # fmt: skip
    # The cleaner runs within a second or two, and compacts the topic made before.
    wait_until(lambda: metric(broker, "odradek_log_cleaner_records_removed_total") > 0, 10,
               "the log cleaner to compact")  # fmt: skip
    assert produce_error(broker, plain, 1_500_000) == "none"  # an older topic's new default
    per_broker = kafka_tool(*configs, "--describe", *this_broker)
    described_defaults = kafka_tool(*configs, "--describe", *cluster_wide)
    static = run_kafka_tool(*configs, "--alter", *this_broker, "--add-config", "num.partitions=3")
    unsupported = run_kafka_tool(*configs, "--alter", *cluster_wide,
                                 "--add-config", "ssl.keystore.location=/keys")  # fmt: skip
    kafka_tool(*configs, "--alter", *this_broker, "--delete-config", "log.cleaner.backoff.ms")
    every = kafka_tool(*configs, "--describe", *this_broker, "--all")
    topic = kafka_tool(*configs, "--describe", "--entity-type", "topics", "--entity-name", plain,
                       "--all")  # fmt: skip

    chain = "log.cleaner.backoff.ms={}".format
    assert per_broker.splitlines() == [
        "Dynamic configs for broker 0 are:",
        f"  {chain(200)} sensitive=false synonyms={{DYNAMIC_BROKER_CONFIG:{chain(200)}, "
        f"DYNAMIC_DEFAULT_BROKER_CONFIG:{chain(300000)}, STATIC_BROKER_CONFIG:{chain(600000)}, "
        f"DEFAULT_CONFIG:{chain(15000)}}}",
    ]
    assert described_defaults.splitlines() == [
        "Default configs for brokers in the cluster are:",
        f"  {chain(300000)} sensitive=false synonyms={{DYNAMIC_DEFAULT_BROKER_CONFIG:"
        f"{chain(300000)}, STATIC_BROKER_CONFIG:{chain(600000)}, DEFAULT_CONFIG:{chain(15000)}}}",
        "  log.cleaner.min.compaction.lag.ms=0 sensitive=false synonyms={"
        "DYNAMIC_DEFAULT_BROKER_CONFIG:log.cleaner.min.compaction.lag.ms=0, "
        "STATIC_BROKER_CONFIG:log.cleaner.min.compaction.lag.ms=3600000, "
        "DEFAULT_CONFIG:log.cleaner.min.compaction.lag.ms=0}",
        "  message.max.bytes=2000000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:"
        "message.max.bytes=2000000, DEFAULT_CONFIG:message.max.bytes=1048588}",
    ]
    assert static.returncode == 1 and (
        "InvalidRequestException: Cannot update these configs dynamically: [num.partitions]"
        in static.stderr
    )
    assert unsupported.returncode == 1 and (
        "InvalidRequestException: ssl.keystore.location: Odradek's TLS and SASL settings are"
        in unsupported.stderr
    )
    assert every.splitlines()[0] == "All configs for broker 0 are:"
    assert (
        f"  {chain(300000)} sensitive=false synonyms={{DYNAMIC_DEFAULT_BROKER_CONFIG:"
        f"{chain(300000)}, STATIC_BROKER_CONFIG:{chain(600000)}, DEFAULT_CONFIG:{chain(15000)}}}"
        in every.splitlines()
    )
    assert "  num.partitions=1 sensitive=false synonyms={DEFAULT_CONFIG:num.partitions=1}" in (
        every.splitlines()
    )
    assert (
        "  max.message.bytes=2000000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:"
        "message.max.bytes=2000000, DEFAULT_CONFIG:message.max.bytes=1048588}" in topic.splitlines()
    )


def produce_error(broker: Broker, topic: str, size: int) -> str:
    """The error of producing one uncompressed record of ``size`` bytes (none: taken).
    Raw Produce: confluent-kafka 2.16 corrupts the interpreter's error state when it
    reports MSG_SIZE_TOO_LARGE to a delivery callback."""
    with WireClient.to(broker.bootstrap) as wire:
        return str(wire.produce(topic, 0, bytes(build_batch([b"x" * size]))).error_code.name)


def metric(broker: Broker, name: str) -> float:
    """An unlabelled sample of the broker's /metrics."""
    lines = broker.metrics_text().splitlines()
    return float(next(line.split()[1] for line in lines if line.startswith(name + " ")))
