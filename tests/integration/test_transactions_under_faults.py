"""Exactly once under faults, judged by the Java client: Kafka's own transactional copier
(the consume-transform-produce loop of Kafka's transaction system tests: a read_committed
consumer, a transactional producer that commits the consumed offsets in each transaction
and aborts a third of them at random) copies every record of a topic exactly once while the
brokers of a 3-broker cluster, transaction and group coordinators and partition leaders
among them, and the copiers themselves are killed (SIGKILL) and restarted one after another:
each output partition holds its input partition's records once each, in order."""

from __future__ import annotations

import json
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from broker_process import unique_name
from cluster_harness import Cluster, ClusterFactory
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, Producer, TopicPartition
from kafka_tools import kafka_tool_command

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

PARTITIONS = 2
RECORDS = 20000
COPY_TIMEOUT_S = 300
TOPIC_CONFIGS = {"min.insync.replicas": "2"}


@dataclass
class Copier:
    """One copier of an input partition; a restarted one has the same transactional id and
    group (fencing its predecessor, resuming from the offsets committed with its output)."""

    cluster: Cluster
    source: str
    partition: int
    sink: str
    directory: Path
    transactional_id: str = field(init=False)
    group: str = field(init=False)
    runs: list[tuple[subprocess.Popen[bytes], Path]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.transactional_id = unique_name(f"copier-{self.partition}")
        self.group = unique_name(f"copier-{self.partition}")
        self.start()

    def start(self) -> None:
        command = kafka_tool_command(
            "transactional-message-copier",
            "--broker-list", self.cluster.bootstrap,
            "--input-topic", self.source,
            "--input-partition", str(self.partition),
            "--output-topic", self.sink,
            "--transactional-id", self.transactional_id,
            "--consumer-group", self.group,
            "--transaction-size", "25",
            "--transaction-timeout", "20000",
            "--enable-random-aborts",
            "--use-group-metadata",
        )  # fmt: skip
        out = self.directory / f"copier-{self.partition}-run-{len(self.runs)}.out"
        with out.open("wb") as sink_file:
            process = subprocess.Popen(command, stdout=sink_file, stderr=subprocess.STDOUT)
        self.runs.append((process, out))

    @property
    def process(self) -> subprocess.Popen[bytes]:
        return self.runs[-1][0]

    def crash_and_restart(self) -> None:
        """SIGKILL in the middle of whatever it does (a transaction, most likely), then a
        new copier in its place."""
        self.process.kill()
        self.process.wait()
        self.start()

    def wait(self) -> dict[str, object]:
        """The last run's exit code checked; its last JSON status line."""
        process, out = self.runs[-1]
        code = process.wait(COPY_TIMEOUT_S)
        assert code == 0, f"the copier exited {code}:\n{out.read_text()[-4000:]}"
        for line in reversed(out.read_text(errors="replace").splitlines()):
            if line.startswith("{"):
                status: dict[str, object] = json.loads(line)
                return status
        raise AssertionError(f"the copier printed no status:\n{out.read_text()[-4000:]}")


def write_input(cluster: Cluster, topic: str) -> None:
    """RECORDS distinct values spread evenly over the partitions, acknowledged by all."""
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "enable.idempotence": True})
    for index in range(RECORDS):
        producer.produce(topic, f"v{index}".encode(), partition=index % PARTITIONS)
        producer.poll(0)
    assert producer.flush(60) == 0, "input records still undelivered after 60 s"


def read_committed_in_order(bootstrap: str, topic: str, partition: int) -> list[str]:
    """Every committed value of one partition, in log order."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": unique_name("reader"),
            "isolation.level": "read_committed",
            "enable.partition.eof": True,
        }
    )
    consumer.assign([TopicPartition(topic, partition, OFFSET_BEGINNING)])
    values: list[str] = []
    try:
        while True:
            message = consumer.poll(30)
            assert message is not None, f"no end of partition seen after {len(values)} records"
            if message.error() is not None:
                assert message.error().code() == KafkaError._PARTITION_EOF, message.error()
                return values
            values.append(message.value().decode())
    finally:
        consumer.close()


def test_the_java_transactional_copier_copies_exactly_once_while_brokers_are_killed(
    cluster_factory: ClusterFactory, tmp_path: Path
) -> None:
    cluster = cluster_factory(brokers=3)
    source = cluster.create_topic(PARTITIONS, 3, TOPIC_CONFIGS, prefix="eos-in")
    sink = cluster.create_topic(PARTITIONS, 3, TOPIC_CONFIGS, prefix="eos-out")
    write_input(cluster, source)
    copiers = [Copier(cluster, source, p, sink, tmp_path) for p in range(PARTITIONS)]
    faults: list[str] = []
    try:
        for node_id in range(3):
            if all(copier.process.poll() is not None for copier in copiers):
                break
            time.sleep(2)
            copier = copiers[node_id % PARTITIONS]
            copier.crash_and_restart()
            faults.append(f"copier {copier.partition}")
            time.sleep(2)
            cluster.kill(node_id)
            time.sleep(2)
            cluster.restart(node_id)
            faults.append(f"broker {node_id}")
        for copier in copiers:
            status = copier.wait()
            assert status.get("stage") == "ShutdownComplete", status
            assert status["remaining"] == 0, status
    finally:
        for copier in copiers:
            copier.process.kill()
    assert len(faults) >= 2, f"the copiers finished after only {faults}"
    for partition in range(PARTITIONS):
        copied = read_committed_in_order(cluster.bootstrap, sink, partition)
        expected = [f"v{index}" for index in range(partition, RECORDS, PARTITIONS)]
        assert len(copied) == len(expected), f"partition {partition}: {len(copied)} copied"
        assert copied == expected, f"partition {partition}: not each record once, in order"
