"""Format ``odradek`` on a real broker and a real local[2] Spark: exact ranges, streaming
without loss or duplicates across a restart, admission control, new partitions,
Trigger.AvailableNow, data loss per failOnDataLoss, and the writer.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import confluent_kafka
import pytest
from broker_process import Broker
from confluent_kafka.admin import AdminClient
from pyspark.errors import PySparkException
from pyspark.sql import DataFrame
from spark_support import (
    TIMEOUT_S,
    Produced,
    add_partitions,
    consume_all,
    new_topic,
    produce,
    spark_session,
)

pytestmark = pytest.mark.slow


def stream(broker: Broker, topic: str, **options: str) -> DataFrame:
    reader = (
        spark_session()
        .readStream.format("odradek")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", "earliest")
    )
    for key, value in options.items():
        reader = reader.option(key, value)
    return reader.load()


class BatchCollector:
    """foreachBatch sink keyed by batch id: a batch replayed after a restart replaces itself."""

    def __init__(self) -> None:
        self.batches: dict[int, list[tuple[int, int, bytes]]] = {}

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        rows = batch.select("partition", "offset", "value").collect()
        self.batches[batch_id] = [(r.partition, r.offset, bytes(r.value)) for r in rows]

    def rows(self) -> list[tuple[int, int, bytes]]:
        return [row for rows in self.batches.values() for row in rows]


def test_streaming_read_equals_what_was_produced_across_a_restart(
    broker: Broker, tmp_path: Path
) -> None:
    topic = new_topic(broker.bootstrap, 6)
    produced: list[Produced] = []
    records = [(f"user-{n % 37}".encode(), f"event-{n}".encode()) for n in range(1500)]

    def producer() -> None:
        for start in range(0, len(records), 100):
            produced.extend(produce(broker.bootstrap, topic, records[start : start + 100]))
            time.sleep(0.05)

    writing = threading.Thread(target=producer)
    writing.start()
    collector = BatchCollector()
    checkpoint = str(tmp_path / "checkpoint")

    def start() -> Any:
        return (
            stream(broker, topic, maxOffsetsPerTrigger="500")
            .writeStream.foreachBatch(collector)
            .option("checkpointLocation", checkpoint)
            .trigger(processingTime="200 milliseconds")
            .start()
        )

    query = start()
    deadline = time.monotonic() + 120
    while len(collector.rows()) < 500 and time.monotonic() < deadline:
        time.sleep(0.2)
    query.stop()  # while the producer is still writing
    query = start()
    writing.join()
    query.processAllAvailable()
    query.stop()

    rows = collector.rows()
    assert len(rows) == len(set(rows)), "duplicates"
    assert sorted(rows) == sorted((p.partition, p.offset, p.value) for p in produced)
    assert all(len(batch) <= 500 for batch in collector.batches.values())
    assert len(collector.batches) >= 3


def test_batch_read_returns_exactly_the_requested_ranges_with_headers(broker: Broker) -> None:
    topic = new_topic(broker.bootstrap, 3)
    for partition in range(3):
        produce(
            broker.bootstrap,
            topic,
            [(b"k", b"%d" % n) for n in range(100)],
            partition,
            headers=[("source", b"test")],
        )
    starting = json.dumps({topic: {"0": 10, "1": -2, "2": 90}})
    ending = json.dumps({topic: {"0": 20, "1": 50, "2": -1}})
    df = (
        spark_session()
        .read.format("odradek")
        .option("kafka.bootstrap.servers", broker.bootstrap)
        .option("subscribe", topic)
        .option("startingOffsets", starting)
        .option("endingOffsets", ending)
        .option("includeHeaders", "true")
        .option("minPartitions", "8")
        .load()
    )
    assert df.rdd.getNumPartitions() >= 8
    rows = df.collect()
    expected = (
        {(0, n) for n in range(10, 20)}
        | {(1, n) for n in range(50)}
        | {(2, n) for n in range(90, 100)}
    )
    assert sorted((r.partition, r.offset) for r in rows) == sorted(expected)
    assert all(bytes(r.value) == b"%d" % r.offset and r.timestampType == 0 for r in rows)
    assert all([(h.key, bytes(h.value)) for h in r.headers] == [("source", b"test")] for r in rows)


def test_available_now_picks_up_new_partitions_and_stops(broker: Broker, tmp_path: Path) -> None:
    topic = new_topic(broker.bootstrap, 2)
    first = produce(broker.bootstrap, topic, [(None, b"a%d" % n) for n in range(50)])
    collector = BatchCollector()

    def run() -> None:
        query = (
            stream(broker, topic)
            .writeStream.foreachBatch(collector)
            .option("checkpointLocation", str(tmp_path / "checkpoint"))
            .trigger(availableNow=True)
            .start()
        )
        query.awaitTermination(TIMEOUT_S * 4)
        assert not query.isActive and query.exception() is None

    run()
    assert len(collector.rows()) == 50
    add_partitions(broker.bootstrap, topic, 4)
    second = [
        produce(broker.bootstrap, topic, [(None, b"b%d" % n)], partition=n % 4)[0]
        for n in range(40)
    ]
    run()
    assert sorted(collector.rows()) == sorted(
        (p.partition, p.offset, p.value) for p in first + second
    )


def delete_records(broker: Broker, topic: str, partition: int, before: int) -> None:
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    futures = admin.delete_records([confluent_kafka.TopicPartition(topic, partition, before)])
    for future in futures.values():
        future.result(TIMEOUT_S)


def test_deleted_records_fail_the_read_or_are_skipped_per_fail_on_data_loss(broker: Broker) -> None:
    topic = new_topic(broker.bootstrap, 1)
    produce(broker.bootstrap, topic, [(None, b"%d" % n) for n in range(100)])
    delete_records(broker, topic, 0, 60)

    def read(fail_on_data_loss: str) -> list[int]:
        df = (
            spark_session()
            .read.format("odradek")
            .option("kafka.bootstrap.servers", broker.bootstrap)
            .option("subscribe", topic)
            .option("startingOffsets", json.dumps({topic: {"0": 10}}))
            .option("failOnDataLoss", fail_on_data_loss)
            .load()
        )
        return sorted(r.offset for r in df.select("offset").collect())

    with pytest.raises(PySparkException, match="failOnDataLoss"):
        read("true")
    assert read("false") == list(range(60, 100))


def test_writer_takes_the_columns_of_sparks_kafka_sink(broker: Broker) -> None:
    topic = new_topic(broker.bootstrap, 2)
    rows = [
        ("k1", b"v1", 0, [("h", b"x")]),
        (None, b"v2", 1, None),
        ("k3", b"v3", 1, []),
    ]
    df = spark_session().createDataFrame(
        rows,
        "key string, value binary, partition int,"
        " headers array<struct<key: string, value: binary>>",
    )
    df.write.format("odradek").option("kafka.bootstrap.servers", broker.bootstrap).option(
        "topic", topic
    ).mode("append").save()
    got = sorted(
        ((p.partition, p.key, p.value) for p in consume_all(broker.bootstrap, topic, 2)),
        key=lambda r: (r[0], r[2]),
    )
    assert got == [(0, b"k1", b"v1"), (1, None, b"v2"), (1, b"k3", b"v3")]


def test_a_bad_option_fails_with_a_sentence_naming_it(broker: Broker) -> None:
    reader = spark_session().read.format("odradek").option("subscribe", "t")
    with pytest.raises(PySparkException, match=r"kafka\.bootstrap\.servers"):
        reader.load().collect()
    reader = reader.option("kafka.bootstrap.servers", broker.bootstrap).option("minPartitions", "0")
    with pytest.raises(PySparkException, match="minPartitions"):
        reader.load().collect()
