"""Compaction of a topic written by transactions, as Kafka's cleaner does it: an aborted
transaction's records go, never having superseded a committed value; its abort marker stays
while it guards data, then gets a delete horizon (``delete.retention.ms``) that Kafka's
own log reader shows, and goes past it. Judged by librdkafka's transactional producer and
its consumers, and by Kafka's kafka-dump-log over the segments."""

from __future__ import annotations

import re
import time
from collections.abc import Callable

import pytest
from broker_process import Broker, BrokerFactory, unique_name
from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from kafka_tools import kafka_tool
from test_transactions import read_committed, transactional

pytestmark = pytest.mark.slow

TIMEOUT_S = 60.0
FAST_CLEANER = {"log.cleaner.backoff.ms": "200"}
TOPIC_CONFIGS = {
    "cleanup.policy": "compact",
    "segment.bytes": "4096",
    "min.cleanable.dirty.ratio": "0.01",
    "delete.retention.ms": "3000",
}
HORIZON = re.compile(r"deleteHorizonMs: OptionalLong\[(\d+)\]")


def dump(broker: Broker, topic: str) -> str:
    """What Kafka's log reader prints of the partition's segments, records included."""
    segments = sorted((broker.data_dir / f"{topic}-0").glob("*.log"))
    return kafka_tool("kafka-dump-log", "--print-data-log", "--files", ",".join(map(str, segments)))


def in_transaction(
    producer: Producer, topic: str, records: list[tuple[bytes, bytes]], commit: bool
) -> None:
    producer.begin_transaction()
    for key, value in records:
        producer.produce(topic, value, key, partition=0)
    assert producer.flush(30) == 0  # written, even those of an abort
    if commit:
        producer.commit_transaction(30)
    else:
        producer.abort_transaction(30)


def eventually(producer: Producer, topic: str, check: Callable[[], bool], what: str) -> None:
    """Until ``check`` holds, adding committed filler so the log keeps getting dirty."""
    deadline = time.monotonic() + TIMEOUT_S
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {TIMEOUT_S} s: {what}")
        in_transaction(producer, topic, [(b"filler", b"f" * 800)] * 3, commit=True)
        time.sleep(0.3)


def test_aborted_data_and_then_its_marker_are_compacted_away(
    broker_factory: BrokerFactory,
) -> None:
    broker = broker_factory(settings=FAST_CLEANER)
    topic = unique_name("txn-compacted")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(topic, 1, 1, config=TOPIC_CONFIGS)])[topic].result(30)
    producer = transactional(broker, unique_name("compacting"))

    def uncommitted() -> list[str]:
        return read_committed(broker.bootstrap, topic, partitions=1, isolation="read_uncommitted")

    def stamped_abort_marker() -> bool:
        printed = dump(broker, topic)
        return "endTxnMarker: ABORT" in printed and HORIZON.search(printed) is not None

    in_transaction(producer, topic, [(b"a", b"committed")], commit=True)
    in_transaction(producer, topic, [(b"a", b"aborted"), (b"b", b"aborted")], commit=False)
    assert "aborted" in uncommitted()

    eventually(producer, topic, lambda: "aborted" not in uncommitted(), "aborted records gone")
    assert "committed" in read_committed(broker.bootstrap, topic, partitions=1)
    eventually(producer, topic, stamped_abort_marker, "a marker stamped with its horizon")
    stamped = dump(broker, topic)
    assert "isvalid: false" not in stamped
    horizon = int(HORIZON.findall(stamped)[0])
    assert time.time() * 1000 < horizon <= time.time() * 1000 + 3000

    eventually(producer, topic, lambda: "endTxnMarker: ABORT" not in dump(broker, topic), "it goes")
    assert time.time() * 1000 >= horizon
    values = read_committed(broker.bootstrap, topic, partitions=1)
    assert "committed" in values and "aborted" not in values
    assert "isvalid: false" not in dump(broker, topic)
