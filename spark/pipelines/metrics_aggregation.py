"""Metrics aggregation: host metric samples -> count, mean, min and max per host, metric
and event-time window, written to a topic (JSON, keyed by host) and optionally Parquet.

    python -m odradek.spark.pipelines.metrics_aggregation --bootstrap-servers HOST:PORT \\
        --source-topic host-metrics --results-topic host-metrics-1m --checkpoint-dir /tmp/metrics
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.query import StreamingQuery

from odradek.spark.pipelines.streaming_job import JobSettings, main, read_topic, start_sinks

SAMPLE_SCHEMA = "host string, metric string, value double, event_time_ms long"
WINDOW = "1 minute"
WATERMARK = "30 seconds"


def metric_aggregates(
    records: DataFrame, window: str = WINDOW, watermark: str = WATERMARK
) -> DataFrame:
    """Per host, metric and tumbling ``window`` of event time: samples, mean, min, max."""
    samples = (
        records.select(F.from_json(F.col("value").cast("string"), SAMPLE_SCHEMA).alias("s"))
        .select(
            "s.host",
            "s.metric",
            "s.value",
            F.timestamp_millis("s.event_time_ms").alias("event_time"),
        )
        .withWatermark("event_time", watermark)
    )
    return (
        samples.groupBy(F.window("event_time", window), "host", "metric")
        .agg(
            F.count("value").alias("samples"),
            F.avg("value").alias("mean"),
            F.min("value").alias("min"),
            F.max("value").alias("max"),
        )
        .select(
            F.col("window.start").alias("window_start"),
            F.col("window.end").alias("window_end"),
            "host",
            "metric",
            "samples",
            "mean",
            "min",
            "max",
        )
    )


def start(spark: SparkSession, settings: JobSettings) -> list[StreamingQuery]:
    aggregates = metric_aggregates(read_topic(spark, settings))
    return start_sinks(aggregates, F.col("host"), settings)


def run(argv: Sequence[str] | None = None) -> None:
    main(start, "Aggregate host metrics per host, metric and minute of event time.", argv)


if __name__ == "__main__":
    run()
