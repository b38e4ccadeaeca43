"""Helpers of the Spark integration tests: one SparkSession per test process, topics,
and plain confluent-kafka producing/consuming to check Spark's results against.
"""

from __future__ import annotations

import collections
import datetime
import functools
import subprocess
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

import confluent_kafka
import pyarrow.parquet as pq
from broker_process import odradek_command
from confluent_kafka.admin import AdminClient, NewPartitions, NewTopic
from pyspark.sql import SparkSession

from odradek.spark.pipelines.clickstream import PageView
from odradek.spark.session import local_session

TIMEOUT_S = 30.0
START_MS = 1_700_000_000_000  # a minute boundary
MINUTE_MS = 60_000


class Produced(NamedTuple):
    partition: int
    offset: int
    key: bytes | None
    value: bytes


@functools.cache
def spark_session() -> SparkSession:
    """Shared by every Spark test module: a local[2] session takes seconds to start."""
    spark = local_session(app_name="odradek-tests", master="local[2]", shuffle_partitions=2)
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def new_topic(bootstrap: str, partitions: int, prefix: str = "spark") -> str:
    name = f"{prefix}-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": bootstrap})  # must outlive its futures
    futures = admin.create_topics([NewTopic(name, partitions, 1)], request_timeout=TIMEOUT_S)
    futures[name].result(TIMEOUT_S)
    return name


def add_partitions(bootstrap: str, topic: str, total: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    futures = admin.create_partitions([NewPartitions(topic, total)], request_timeout=TIMEOUT_S)
    futures[topic].result(TIMEOUT_S)


def produce(
    bootstrap: str,
    topic: str,
    records: Iterable[tuple[bytes | None, bytes]],
    partition: int | None = None,
    headers: list[tuple[str, bytes]] | None = None,
) -> list[Produced]:
    """Send every (key, value) and return what the broker acknowledged."""
    acked: list[Produced] = []

    def on_delivery(error: confluent_kafka.KafkaError | None, msg: confluent_kafka.Message) -> None:
        assert error is None, error
        acked.append(Produced(msg.partition(), msg.offset(), msg.key(), msg.value()))

    producer = confluent_kafka.Producer({"bootstrap.servers": bootstrap, "linger.ms": 5})
    extra = {} if partition is None else {"partition": partition}
    for key, value in records:
        producer.produce(topic, value, key, on_delivery=on_delivery, headers=headers, **extra)
        producer.poll(0)
    assert producer.flush(TIMEOUT_S) == 0
    return acked


def consume_all(bootstrap: str, topic: str, partitions: int) -> list[Produced]:
    """Every record of the topic now, read with assign (no group)."""
    consumer = confluent_kafka.Consumer(
        {"bootstrap.servers": bootstrap, "group.id": "spark-tests", "enable.auto.commit": False}
    )
    tps = [confluent_kafka.TopicPartition(topic, p) for p in range(partitions)]
    ends = {tp.partition: consumer.get_watermark_offsets(tp, TIMEOUT_S)[1] for tp in tps}
    consumer.assign([confluent_kafka.TopicPartition(topic, p, 0) for p in range(partitions)])
    records: list[Produced] = []
    while len(records) < sum(ends.values()):
        msg = consumer.poll(TIMEOUT_S)
        assert msg is not None and msg.error() is None, msg and msg.error()
        records.append(Produced(msg.partition(), msg.offset(), msg.key(), msg.value()))
    consumer.close()
    return records


def demo(bootstrap: str, kind: str, topic: str, count: int, seed: int, start_ms: int) -> None:
    """`odradek demo KIND TOPIC` at 5 events per second of event time, unpaced."""
    subprocess.run(
        [
            *odradek_command(),
            "demo",
            kind,
            topic,
            "--count",
            str(count),
            "--rate",
            "5",
            "--seed",
            str(seed),
            "--start-time",
            str(start_ms),
            "--as-fast-as-possible",
            "--bootstrap-server",
            bootstrap,
            "--quiet",
        ],
        check=True,
        timeout=60,
    )


def closing_page_view() -> PageView:
    """A page view late enough to close every window before it (the pipeline's watermark
    is 30 s), to be left out of the expected counts."""
    return PageView("user-x", "s", "/closing", None, START_MS + 60 * MINUTE_MS)


def close_windows(bootstrap: str, topic: str) -> PageView:
    """Send the closing page view; returns it."""
    sentinel = closing_page_view()
    produce(bootstrap, topic, [(sentinel.key(), sentinel.encode())])
    return sentinel


def window_start(event_time_ms: int) -> datetime.datetime:
    start = event_time_ms - event_time_ms % MINUTE_MS
    return datetime.datetime.fromtimestamp(start / 1000, datetime.UTC).replace(tzinfo=None)


def expected_page_views(
    bootstrap: str, topic: str, partitions: int, leave_out: PageView
) -> collections.Counter[tuple[datetime.datetime, str]]:
    """Views per (minute window, page), counted in Python from what the topic holds."""
    return count_page_views((r.value for r in consume_all(bootstrap, topic, partitions)), leave_out)


def count_page_views(
    values: Iterable[bytes], leave_out: PageView
) -> collections.Counter[tuple[datetime.datetime, str]]:
    """Views per (minute window, page) of encoded page views, ``leave_out`` left out."""
    views = map(PageView.decode, values)
    return collections.Counter(
        (window_start(v.event_time_ms), v.page) for v in views if v != leave_out
    )


def parquet_page_views(path: Path) -> collections.Counter[tuple[datetime.datetime, str]]:
    """Views per (minute window, page) in the activity-tracking pipeline's Parquet output."""
    written: collections.Counter[tuple[datetime.datetime, str]] = collections.Counter()
    for row in pq.read_table(path).to_pylist():
        written[(row["window_start"], row["page"])] += row["views"]
    return written
