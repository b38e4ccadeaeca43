"""Exactly once under faults, judged by the Java client: Kafka's own transactional copier
(the consume-transform-produce loop of Kafka's transaction system tests: a read_committed
consumer, a transactional producer that commits the consumed offsets in each transaction
and aborts a third of them at random) copies every record of a topic exactly once while the
brokers of a 3-broker cluster, transaction and group coordinators and partition leaders
among them, are killed and restarted one after another."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest
from broker_process import unique_name
from cluster_harness import Cluster, ClusterFactory
from confluent_kafka import Producer
from kafka_tools import kafka_tool_command
from test_transactions import read_committed

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

PARTITIONS = 2
RECORDS = 20000
COPY_TIMEOUT_S = 300
TOPIC_CONFIGS = {"min.insync.replicas": "2"}


def start_copier(
    cluster: Cluster, source: str, partition: int, sink: str, out: Path
) -> subprocess.Popen[bytes]:
    command = kafka_tool_command(
        "transactional-message-copier",
        "--broker-list", cluster.bootstrap,
        "--input-topic", source,
        "--input-partition", str(partition),
        "--output-topic", sink,
        "--transactional-id", unique_name(f"copier-{partition}"),
        "--consumer-group", unique_name(f"copier-{partition}"),
        "--transaction-size", "25",
        "--transaction-timeout", "20000",
        "--enable-random-aborts",
        "--use-group-metadata",
    )  # fmt: skip
    with out.open("wb") as sink_file:
        return subprocess.Popen(command, stdout=sink_file, stderr=subprocess.STDOUT)


def write_input(cluster: Cluster, topic: str) -> None:
    """RECORDS distinct values spread evenly over the partitions, acknowledged by all."""
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "enable.idempotence": True})
    for index in range(RECORDS):
        producer.produce(topic, f"v{index}".encode(), partition=index % PARTITIONS)
        producer.poll(0)
    assert producer.flush(60) == 0, "input records still undelivered after 60 s"


def last_status(out: Path) -> dict[str, object]:
    """The copier's last JSON status line (its progress, or its shutdown)."""
    for line in reversed(out.read_text(errors="replace").splitlines()):
        if line.startswith("{"):
            status: dict[str, object] = json.loads(line)
            return status
    return {}


def test_the_java_transactional_copier_copies_exactly_once_while_brokers_are_killed(
    cluster_factory: ClusterFactory, tmp_path: Path
) -> None:
    cluster = cluster_factory(brokers=3)
    source = cluster.create_topic(PARTITIONS, 3, TOPIC_CONFIGS, prefix="eos-in")
    sink = cluster.create_topic(PARTITIONS, 3, TOPIC_CONFIGS, prefix="eos-out")
    write_input(cluster, source)
    outputs = [tmp_path / f"copier-{partition}.out" for partition in range(PARTITIONS)]
    copiers = [
        start_copier(cluster, source, partition, sink, outputs[partition])
        for partition in range(PARTITIONS)
    ]
    bounced = []
    try:
        for node_id in range(3):
            if all(copier.poll() is not None for copier in copiers):
                break
            time.sleep(2)
            cluster.kill(node_id)
            time.sleep(2)
            cluster.restart(node_id)
            bounced.append(node_id)
        for copier, out in zip(copiers, outputs, strict=True):
            code = copier.wait(COPY_TIMEOUT_S)
            assert code == 0, f"the copier exited {code}:\n{out.read_text()[-4000:]}"
    finally:
        for copier in copiers:
            copier.kill()
    assert bounced, "the copiers finished before any broker was killed"
    for out in outputs:
        status = last_status(out)
        assert status.get("stage") == "ShutdownComplete" and status["remaining"] == 0, status
    copied = read_committed(cluster.bootstrap, sink, partitions=PARTITIONS)
    assert len(copied) == RECORDS, f"{len(copied)} records copied of {RECORDS}"
    assert copied == sorted(f"v{index}" for index in range(RECORDS))
