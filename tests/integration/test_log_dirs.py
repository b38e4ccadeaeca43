"""Several log directories on one broker (JBOD), judged by Kafka's own kafka-log-dirs and
kafka-reassign-partitions: replicas spread over the directories, DescribeLogDirs reports
each, and a replica moves to another directory under an acks=all producer with nothing
lost, and is still there after a restart."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from broker_process import Broker, BrokerFactory, unique_name
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from kafka_tools import kafka_tool
from kafka_wire import WireClient, load_request_schema, nested
from kio.static.primitive import i32

API_ALTER_REPLICA_LOG_DIRS = 34
LOG_DIR_NOT_FOUND = 57
REPLICA_NOT_AVAILABLE = 9
RECORD = b"r" * 1000


@pytest.fixture
def jbod_broker(broker_factory: BrokerFactory) -> Iterator[Broker]:
    """A broker with two log directories, ``data`` and ``data2``."""
    broker = broker_factory(start=False)
    broker.settings["log.dirs"] = f"{broker.data_dir},{second_dir(broker)}"
    yield broker.start()


def second_dir(broker: Broker) -> Path:
    return broker.workdir / "data2"


def describe(broker: Broker, topic: str) -> dict[str, dict[str, tuple[int, int, bool]]]:
    """kafka-log-dirs --describe: log dir -> partition -> (size, offset lag, is future)."""
    printed = kafka_tool(
        "kafka-log-dirs",
        "--bootstrap-server",
        broker.bootstrap,
        "--describe",
        "--topic-list",
        topic,
    )
    report = json.loads(printed.strip().splitlines()[-1])
    [node] = report["brokers"]
    assert all(log_dir["error"] is None for log_dir in node["logDirs"])
    return {
        log_dir["logDir"]: {
            p["partition"]: (p["size"], p["offsetLag"], p["isFuture"])
            for p in log_dir["partitions"]
        }
        for log_dir in node["logDirs"]
    }


class BackgroundProducer:
    """An acks=all idempotent producer writing to partition 0 until stopped; counts acks."""

    def __init__(self, broker: Broker, topic: str) -> None:
        self.acked = 0
        self.failed: list[str] = []
        self._stop = threading.Event()
        self._producer = Producer(
            {"bootstrap.servers": broker.bootstrap, "acks": "all", "enable.idempotence": True}
        )
        self._topic = topic
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _delivered(self, error: KafkaError | None, _: Any) -> None:
        if error is None:
            self.acked += 1
        else:
            self.failed.append(str(error))

    def _run(self) -> None:
        while not self._stop.is_set():
            self._producer.produce(self._topic, RECORD, partition=0, on_delivery=self._delivered)
            self._producer.poll(0.001)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)
        assert self._producer.flush(30) == 0


def count_records(broker: Broker, topic: str) -> int:
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": unique_name("count"),
            "enable.auto.commit": False,
        }
    )
    try:
        _, end = consumer.get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
        consumer.assign([TopicPartition(topic, 0, 0)])
        seen, deadline = 0, time.monotonic() + 60
        while seen < end and time.monotonic() < deadline:
            for message in consumer.consume(1000, timeout=1):
                assert message.error() is None, message.error()
                assert message.value() == RECORD
                seen += 1
        return seen
    finally:
        consumer.close()


def test_replicas_spread_over_the_log_dirs_and_one_moves_under_load_with_nothing_lost(
    jbod_broker: Broker, tmp_path: Path
) -> None:
    broker, topic = jbod_broker, unique_name("jbod")
    dirs = [str(broker.data_dir), str(second_dir(broker))]
    server = ("--bootstrap-server", broker.bootstrap)
    kafka_tool("kafka-topics", *server, "--create", "--topic", topic, "--partitions", "4")
    spread = describe(broker, topic)
    assert sorted(spread) == sorted(dirs)
    assert [len(partitions) for partitions in spread.values()] == [2, 2]
    source = next(d for d, partitions in spread.items() if f"{topic}-0" in partitions)
    target = next(d for d in dirs if d != source)

    producer = BackgroundProducer(broker, topic)
    try:
        while producer.acked < 5_000:  # about 5 MB to copy
            time.sleep(0.1)
        plan = tmp_path / "move.json"
        plan.write_text(
            json.dumps(
                {
                    "version": 1,
                    "partitions": [
                        {"topic": topic, "partition": 0, "replicas": [0], "log_dirs": [target]}
                    ],
                }
            )
        )
        reassign = ("kafka-reassign-partitions", *server, "--reassignment-json-file", str(plan))
        executed = kafka_tool(*reassign, "--execute")
        assert f'"log_dirs":["{source}"]' in executed  # the current assignment, to roll back
        started = f"Successfully started moving log directory to {target} for replica {topic}-0"
        assert started in executed
        deadline = time.monotonic() + 60
        while True:
            verified = kafka_tool(*reassign, "--verify")
            if f"Reassignment of replica {topic}-0-0 completed successfully." in verified:
                break
            assert "is still in progress" in verified, verified
            assert time.monotonic() < deadline, verified
            time.sleep(0.5)
    finally:
        producer.stop()

    assert producer.failed == []
    moved = describe(broker, topic)
    assert f"{topic}-0" in moved[target] and f"{topic}-0" not in moved[source]
    assert moved[target][f"{topic}-0"][1:] == (0, False)
    assert (Path(target) / f"{topic}-0").is_dir()
    assert count_records(broker, topic) == producer.acked

    broker.restart()
    assert f"{topic}-0" in describe(broker, topic)[target]
    assert not [p for p in Path(source).iterdir() if p.name.startswith(f"{topic}-0")]
    assert count_records(broker, topic) == producer.acked


def test_alter_replica_log_dirs_refuses_an_unknown_dir_and_a_replica_not_here(
    jbod_broker: Broker, tmp_path: Path
) -> None:
    topic = unique_name("jbod-errors")
    schema = load_request_schema(API_ALTER_REPLICA_LOG_DIRS, 2)
    topic_entry = nested(schema, "AlterReplicaLogDirTopic")
    log_dir = nested(schema, "AlterReplicaLogDir")

    def alter(path: str, partitions: tuple[int, ...]) -> dict[int, int]:
        body = schema(
            dirs=(
                log_dir(
                    path=path,
                    topics=(topic_entry(name=topic, partitions=tuple(i32(p) for p in partitions)),),
                ),
            )
        )
        with WireClient.to(jbod_broker.bootstrap) as wire:
            [result] = wire.call(API_ALTER_REPLICA_LOG_DIRS, 2, body).results
        return {p.partition_index: p.error_code.value for p in result.partitions}

    with WireClient.to(jbod_broker.bootstrap) as wire:
        wire.wait_for_topic(topic)
    assert alter(str(tmp_path / "not-a-log-dir"), (0,)) == {0: LOG_DIR_NOT_FOUND}
    assert alter(str(second_dir(jbod_broker)), (7,)) == {7: REPLICA_NOT_AVAILABLE}
