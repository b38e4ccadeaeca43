"""Activity tracking: page views -> views per page per event-time window.

Windows are tumbling, on the event's own time; the watermark bounds how late an
event may arrive and lets each window be written once, when it closes. Results
go to a topic (JSON, keyed by page) and to Parquet.

    python -m odradek.spark.pipelines.activity_tracking --bootstrap-servers HOST:PORT \\
        --source-topic page-views --results-topic page-view-counts \\
        --checkpoint-dir /tmp/activity --parquet-path /tmp/activity/parquet
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.query import StreamingQuery

from odradek.spark.pipelines.streaming_job import JobSettings, main, read_topic, start_sinks

PAGE_VIEW_SCHEMA = (
    "user_id string, session_id string, page string, referrer string, event_time_ms long"
)
WINDOW = "1 minute"
WATERMARK = "30 seconds"


def page_view_counts(
    records: DataFrame, window: str = WINDOW, watermark: str = WATERMARK
) -> DataFrame:
    """Views per page per tumbling ``window`` of event time, from Kafka-shaped records."""
    views = (
        records.select(F.from_json(F.col("value").cast("string"), PAGE_VIEW_SCHEMA).alias("v"))
        .select("v.page", F.timestamp_millis("v.event_time_ms").alias("event_time"))
        .withWatermark("event_time", watermark)
    )
    return (
        views.groupBy(F.window("event_time", window), "page")
        .count()
        .select(
            F.col("window.start").alias("window_start"),
            F.col("window.end").alias("window_end"),
            "page",
            F.col("count").alias("views"),
        )
    )


def start(spark: SparkSession, settings: JobSettings) -> list[StreamingQuery]:
    counts = page_view_counts(read_topic(spark, settings))
    return start_sinks(counts, F.col("page"), settings)


def run(argv: Sequence[str] | None = None) -> None:
    main(start, "Count page views per page per minute of event time.", argv)


if __name__ == "__main__":
    run()
