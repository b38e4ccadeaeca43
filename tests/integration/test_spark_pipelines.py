"""The example pipelines on a real broker and a real local[2] Spark, checked against
results computed in plain Python from the records the topic holds.
"""

from __future__ import annotations

import collections
import datetime
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from broker_process import Broker, odradek_command
from spark_support import consume_all, new_topic, produce, spark_session

from odradek.spark.pipelines import activity_tracking, metrics_aggregation
from odradek.spark.pipelines.clickstream import PageView
from odradek.spark.pipelines.host_metrics import MetricSample
from odradek.spark.pipelines.streaming_job import JobSettings
from odradek.spark.session import connector_jars

pytestmark = pytest.mark.slow

START_MS = 1_700_000_000_000  # a minute boundary
MINUTE_MS = 60_000
PARTITIONS = 3


def demo(broker: Broker, kind: str, topic: str, count: int, seed: int, start_ms: int) -> None:
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
            broker.bootstrap,
            "--quiet",
        ],
        check=True,
        timeout=60,
    )


def window_start(event_time_ms: int) -> datetime.datetime:
    start = event_time_ms - event_time_ms % MINUTE_MS
    return datetime.datetime.fromtimestamp(start / 1000, datetime.UTC).replace(tzinfo=None)


def run_to_end(settings: JobSettings, start: object) -> None:
    queries = start(spark_session(), settings)  # type: ignore[operator]
    for query in queries:
        query.awaitTermination()
        assert query.exception() is None


@pytest.mark.parametrize("source_format", ["odradek", "kafka"])
def test_activity_tracking_parquet_matches_independent_counts_after_restart(
    broker: Broker, tmp_path: Path, source_format: str
) -> None:
    if source_format == "kafka" and not connector_jars():
        pytest.fail("Spark's Kafka connector jars are missing: run scripts/setup.sh")
    source, results = new_topic(broker.bootstrap, PARTITIONS), new_topic(broker.bootstrap, 1)
    settings = JobSettings(
        bootstrap_servers=broker.bootstrap,
        source_topic=source,
        results_topic=results,
        checkpoint_dir=str(tmp_path / "checkpoints"),
        parquet_path=str(tmp_path / "parquet"),
        format=source_format,
        trigger_seconds=0.5,
    )
    # First half, then a restart from the checkpoint in the middle of the event stream:
    # the window around the boundary holds counts from both runs.
    demo(broker, "clickstream", source, 600, seed=1, start_ms=START_MS)
    queries = activity_tracking.start(spark_session(), settings)
    for query in queries:
        query.processAllAvailable()
        query.stop()
    demo(broker, "clickstream", source, 600, seed=2, start_ms=START_MS + 120_000)
    # A late-enough event closes every window before it (watermark 30 s).
    sentinel = PageView("user-x", "s", "/closing", None, START_MS + 60 * MINUTE_MS)
    produce(broker.bootstrap, source, [(sentinel.key(), sentinel.encode())])
    run_to_end(JobSettings(**{**settings.__dict__, "available_now": True}), activity_tracking.start)

    views = [PageView.decode(r.value) for r in consume_all(broker.bootstrap, source, PARTITIONS)]
    expected = collections.Counter(
        (window_start(v.event_time_ms), v.page) for v in views if v != sentinel
    )
    table = pq.read_table(tmp_path / "parquet").to_pylist()
    written = collections.Counter()
    for row in table:
        written[(row["window_start"], row["page"])] += row["views"]
    assert written == expected
    assert len({w for w, _ in expected}) >= 4
    published = consume_all(broker.bootstrap, results, 1)
    assert len(published) == len(table)


def test_metrics_aggregation_matches_independent_aggregates(broker: Broker, tmp_path: Path) -> None:
    source, results = new_topic(broker.bootstrap, PARTITIONS), new_topic(broker.bootstrap, 1)
    demo(broker, "metrics", source, 800, seed=3, start_ms=START_MS)
    closing = MetricSample("host-x", "cpu.percent", 0.0, START_MS + 60 * MINUTE_MS)
    produce(broker.bootstrap, source, [(closing.key(), closing.encode())])
    settings = JobSettings(
        bootstrap_servers=broker.bootstrap,
        source_topic=source,
        results_topic=results,
        checkpoint_dir=str(tmp_path / "checkpoints"),
        available_now=True,
    )
    run_to_end(settings, metrics_aggregation.start)

    samples = [
        MetricSample.decode(r.value) for r in consume_all(broker.bootstrap, source, PARTITIONS)
    ]
    groups: dict[tuple[int, str, str], list[float]] = collections.defaultdict(list)
    for s in samples:
        if s != closing:
            groups[(s.event_time_ms - s.event_time_ms % MINUTE_MS, s.host, s.metric)].append(
                s.value
            )
    published = [r for r in consume_all(broker.bootstrap, results, 1)]
    assert len(published) == len(groups)
    import json

    for record in published:
        row = json.loads(record.value)
        assert record.key == row["host"].encode()
        start = int(
            datetime.datetime.fromisoformat(row["window_start"])
            .replace(tzinfo=datetime.UTC)
            .timestamp()
            * 1000
        )
        values = groups[(start, row["host"], row["metric"])]
        assert row["samples"] == len(values)
        assert row["min"] == min(values) and row["max"] == max(values)
        assert row["mean"] == pytest.approx(sum(values) / len(values))
