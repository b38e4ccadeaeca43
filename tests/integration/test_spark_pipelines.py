"""The example pipelines on a real broker and a real local[2] Spark, checked against
results computed in plain Python from the records the topic holds.
"""

from __future__ import annotations

import collections
import datetime
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from broker_process import Broker, BrokerFactory
from secured_broker import PLAIN_USERS, secured_broker
from spark_support import (
    MINUTE_MS,
    START_MS,
    close_windows,
    consume_all,
    demo,
    expected_page_views,
    new_topic,
    parquet_page_views,
    produce,
    spark_session,
)

from odradek.spark.pipelines import activity_tracking, metrics_aggregation
from odradek.spark.pipelines.host_metrics import MetricSample
from odradek.spark.pipelines.streaming_job import JobSettings
from odradek.spark.session import connector_jars

pytestmark = pytest.mark.slow

PARTITIONS = 3


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
    demo(broker.bootstrap, "clickstream", source, 600, seed=1, start_ms=START_MS)
    queries = activity_tracking.start(spark_session(), settings)
    for query in queries:
        query.processAllAvailable()
        query.stop()
    demo(broker.bootstrap, "clickstream", source, 600, seed=2, start_ms=START_MS + 120_000)
    sentinel = close_windows(broker.bootstrap, source)
    run_to_end(JobSettings(**{**settings.__dict__, "available_now": True}), activity_tracking.start)

    expected = expected_page_views(broker.bootstrap, source, PARTITIONS, leave_out=sentinel)
    written = parquet_page_views(tmp_path / "parquet")
    assert written == expected
    assert len({w for w, _ in expected}) >= 4
    published = consume_all(broker.bootstrap, results, 1)
    assert len(published) == pq.read_table(tmp_path / "parquet").num_rows


@pytest.mark.parametrize("secured", [False, True], ids=["plaintext", "sasl-password-in-a-file"])
def test_metrics_aggregation_matches_independent_aggregates(
    broker: Broker, broker_factory: BrokerFactory, tmp_path: Path, secured: bool
) -> None:
    """Secured: Spark reads and writes over SASL as a user whose password it reads from a
    file, as a pod reads a mounted Secret (``${directory:DIR:KEY}``): never in the plan."""
    spark_bootstrap, properties = broker.bootstrap, ()
    if secured:
        guarded = secured_broker(broker_factory, tmp_path / "tls")
        broker, spark_bootstrap = guarded.broker, guarded.sasl_plaintext_bootstrap()
        secret = tmp_path / "user"
        secret.mkdir()
        (secret / "password").write_text(PLAIN_USERS["bob"] + "\n")
        properties = (
            ("security.protocol", "SASL_PLAINTEXT"),
            ("sasl.mechanism", "PLAIN"),
            ("sasl.username", "bob"),
            ("sasl.password", f"${{directory:{secret}:password}}"),
        )
    source, results = new_topic(broker.bootstrap, PARTITIONS), new_topic(broker.bootstrap, 1)
    demo(broker.bootstrap, "metrics", source, 800, seed=3, start_ms=START_MS)
    closing = MetricSample("host-x", "cpu.percent", 0.0, START_MS + 60 * MINUTE_MS)
    produce(broker.bootstrap, source, [(closing.key(), closing.encode())])
    settings = JobSettings(
        bootstrap_servers=spark_bootstrap,
        source_topic=source,
        results_topic=results,
        checkpoint_dir=str(tmp_path / "checkpoints"),
        available_now=True,
        client_properties=properties,
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
