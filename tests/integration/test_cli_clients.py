"""`odradek topic`, `odradek produce` and `odradek consume` run as subprocesses against a broker."""

from __future__ import annotations

from pathlib import Path

import pytest
from broker_process import Broker, free_port, unique_name
from odradek_cli import odradek


def topic_args(broker: Broker, action: str, *args: str) -> list[str]:
    return ["topic", action, *args, "--bootstrap-server", broker.bootstrap]


def create_topic(broker: Broker, partitions: int = 1) -> str:
    name = unique_name("cli")
    odradek(*topic_args(broker, "create", name, "--partitions", str(partitions)))
    return name


def produce(broker: Broker, topic: str, *args: str, stdin: str | None = None) -> str:
    """Run ``odradek produce``; returns its status output (stderr)."""
    return odradek(
        "produce", topic, "--bootstrap-server", broker.bootstrap, *args, stdin=stdin
    ).stderr


def consume(broker: Broker, topic: str, *args: str) -> list[str]:
    """Run ``odradek consume --exit``; returns its output lines."""
    completed = odradek("consume", topic, "--exit", "--bootstrap-server", broker.bootstrap, *args)
    return completed.stdout.splitlines()


def test_topic_create_describe_list_delete_round_trip(broker: Broker) -> None:
    name = unique_name("cli-admin")

    created = odradek(
        *topic_args(broker, "create", name, "--partitions", "3", "--replication-factor", "1"),
        "--config",
        "cleanup.policy=compact",
    )
    assert f"Created topic {name}." in created.stderr

    assert name in odradek(*topic_args(broker, "list")).stdout.splitlines()

    description = odradek(*topic_args(broker, "describe", name)).stdout.splitlines()
    assert description[0].startswith(f"Topic: {name}\tPartitionCount: 3\tReplicationFactor: 1")
    assert "cleanup.policy=compact" in description[0]
    assert [line.split("\t")[2] for line in description[1:]] == [
        "Partition: 0",
        "Partition: 1",
        "Partition: 2",
    ]
    for line in description[1:]:
        assert "\tLeader: " in line and "\tReplicas: " in line and "\tIsr: " in line

    deleted = odradek(*topic_args(broker, "delete", name))
    assert f"Deleted topic {name}." in deleted.stderr
    assert name not in odradek(*topic_args(broker, "list")).stdout.splitlines()


def test_topic_create_of_existing_topic_fails_unless_if_not_exists(broker: Broker) -> None:
    name = create_topic(broker)

    failed = odradek(*topic_args(broker, "create", name), expect=1)
    assert failed.stderr.splitlines()[-1].startswith(
        f"odradek topic: error: cannot create topic {name}: "
    )
    assert "already exists" in failed.stderr

    tolerated = odradek(*topic_args(broker, "create", name, "--if-not-exists"))
    assert f"Topic {name} already exists." in tolerated.stderr


def test_topic_describe_and_delete_of_unknown_topic_fail_with_a_sentence(broker: Broker) -> None:
    name = unique_name("cli-missing")

    described = odradek(*topic_args(broker, "describe", name), expect=1)
    assert described.stderr.splitlines()[-1] == f"odradek topic: error: no such topic: {name}"

    deleted = odradek(*topic_args(broker, "delete", name), expect=1)
    assert f"cannot delete topic {name}: " in deleted.stderr


@pytest.mark.parametrize(
    "command",
    [["topic", "list"], ["produce", "t", "--count", "1"], ["consume", "t"]],
    ids=["topic", "produce", "consume"],
)
def test_commands_say_plainly_when_the_cluster_is_unreachable(command: list[str]) -> None:
    address = f"127.0.0.1:{free_port()}"

    failed = odradek(*command, "--bootstrap-server", address, "--timeout", "2", expect=1)

    last_line = failed.stderr.splitlines()[-1]
    assert last_line.startswith(f"odradek {command[0]}: error: ")
    assert address in last_line


def test_produce_lines_with_keys_and_headers_then_consume_them_formatted(broker: Broker) -> None:
    topic = create_topic(broker)

    status = produce(
        broker,
        topic,
        "--key-separator",
        ":",
        "--header",
        "origin=cli",
        stdin="alpha:first\nbeta:second: with colon\r\n:empty key\n",
    )
    assert f"Produced to {topic}: 3 records" in status

    lines = consume(broker, topic, "--format", "%k|%s|%t|%p|%o|%h|%K|%S\\n")
    assert lines == [
        f"alpha|first|{topic}|0|0|origin=cli|5|5",
        f"beta|second: with colon|{topic}|0|1|origin=cli|4|18",
        f"|empty key|{topic}|0|2|origin=cli|0|9",
    ]


def test_produce_rejects_a_line_without_the_key_separator(broker: Broker) -> None:
    topic = create_topic(broker)

    failed = odradek(
        "produce",
        topic,
        "--key-separator",
        "=",
        "--bootstrap-server",
        broker.bootstrap,
        stdin="a=1\nno separator\n",
        expect=1,
    )
    assert "line 2 has no key separator '='" in failed.stderr


@pytest.mark.parametrize("compression", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_synthetic_records_round_trip_with_each_compression(
    broker: Broker, compression: str
) -> None:
    topic = create_topic(broker)

    produce(broker, topic, "--count", "2000", "--size", "300", "--compression", compression)

    lines = consume(broker, topic, "-q", "--format", "%o %S %s\\n")
    assert len(lines) == 2000
    for expected_offset, line in enumerate(lines):
        offset, size, value = line.split(" ", 2)
        assert (int(offset), int(size), len(value)) == (expected_offset, 300, 300)
        assert value.startswith(f"{expected_offset} ")


def test_consume_starts_at_the_requested_offset(broker: Broker) -> None:
    topic = create_topic(broker)
    produce(broker, topic, stdin="".join(f"record {n}\n" for n in range(10)))

    assert consume(broker, topic, "--offset", "7") == ["record 7", "record 8", "record 9"]
    assert consume(broker, topic, "--offset", "-2") == ["record 8", "record 9"]
    assert consume(broker, topic, "--offset", "end") == []
    assert consume(broker, topic, "--offset", "beginning", "--count", "2") == [
        "record 0",
        "record 1",
    ]


def test_produce_and_consume_one_partition(broker: Broker) -> None:
    topic = create_topic(broker, partitions=3)

    produce(broker, topic, "--partition", "2", stdin="to two\n")

    assert consume(broker, topic, "--partition", "2", "--format", "%p %s\\n") == ["2 to two"]
    assert consume(broker, topic, "--partition", "0", "--partition", "1") == []
    assert consume(broker, topic, "--format", "%p\\n") == ["2"]


def test_consume_of_missing_partition_or_topic_fails_with_a_sentence(broker: Broker) -> None:
    topic = create_topic(broker, partitions=2)

    failed = odradek(
        "consume", topic, "--partition", "5", "--bootstrap-server", broker.bootstrap, expect=1
    )
    assert failed.stderr.splitlines()[-1] == (
        f"odradek consume: error: topic {topic} has no partition 5 (it has 2)"
    )

    missing = unique_name("cli-missing")
    failed = odradek(
        "consume", missing, "--timeout", "5", "--bootstrap-server", broker.bootstrap, expect=1
    )
    assert failed.stderr.splitlines()[-1].startswith(
        f"odradek consume: error: cannot consume topic {missing}: "
    )


def test_produce_reads_a_file_and_bootstrap_comes_from_the_environment(
    broker: Broker, tmp_path: Path
) -> None:
    topic = create_topic(broker)
    records = tmp_path / "records.txt"
    records.write_text("from a file\nsecond line\n")
    env = {"ODRADEK_BOOTSTRAP_SERVERS": broker.bootstrap}

    odradek("produce", topic, "--file", str(records), env=env)

    consumed = odradek("consume", topic, "--exit", env=env)
    assert consumed.stdout.splitlines() == ["from a file", "second line"]
    assert f"Consuming {topic} partitions 0 from the beginning." in consumed.stderr


def test_produce_of_a_missing_file_fails_with_a_sentence(broker: Broker, tmp_path: Path) -> None:
    missing = tmp_path / "absent.txt"

    failed = odradek(
        "produce", "t", "--file", str(missing), "--bootstrap-server", broker.bootstrap, expect=1
    )
    assert failed.stderr.splitlines()[-1] == (
        f"odradek produce: error: cannot read {missing}: No such file or directory"
    )
