"""What the example pipelines share: their settings, the source and the two sinks.

Each pipeline reads one topic (format ``odradek``, or Spark's own ``kafka``: the
options are the same), aggregates it, and writes the result to a results topic
and, optionally, to Parquet. Each sink is its own query with its own checkpoint
folder, so both resume from where they stopped.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.query import StreamingQuery
from pyspark.sql.streaming.readwriter import DataStreamReader, DataStreamWriter

from odradek.spark.data_source import FORMAT
from odradek.spark.session import local_session

FORMATS = (FORMAT, "kafka")
Stream = TypeVar("Stream", DataStreamReader, DataStreamWriter)


@dataclass(frozen=True)
class JobSettings:
    bootstrap_servers: str
    source_topic: str
    results_topic: str
    checkpoint_dir: str
    parquet_path: str | None = None
    format: str = FORMAT
    starting_offsets: str = "earliest"
    max_offsets_per_trigger: int | None = None
    available_now: bool = False
    """Process what is there and stop (Trigger.AvailableNow) instead of running on."""
    trigger_seconds: float = 5.0
    client_properties: tuple[tuple[str, str], ...] = ()
    """Kafka client settings (security: a User's, with ${directory:DIR:KEY} for secrets)."""


def _with_client_properties(stream: Stream, settings: JobSettings) -> Stream:
    for key, value in settings.client_properties:
        stream = stream.option(f"kafka.{key}", value)
    return stream


def read_topic(spark: SparkSession, settings: JobSettings) -> DataFrame:
    """The source topic as a stream with Spark's Kafka source columns."""
    reader = _with_client_properties(
        spark.readStream.format(settings.format)
        .option("kafka.bootstrap.servers", settings.bootstrap_servers)
        .option("subscribe", settings.source_topic)
        .option("startingOffsets", settings.starting_offsets),
        settings,
    )
    if settings.max_offsets_per_trigger is not None:
        reader = reader.option("maxOffsetsPerTrigger", str(settings.max_offsets_per_trigger))
    return reader.load()


def start_sinks(result: DataFrame, key: Column, settings: JobSettings) -> list[StreamingQuery]:
    """Append ``result`` to the results topic (as JSON, keyed by ``key``) and to Parquet."""
    checkpoints = Path(settings.checkpoint_dir)
    as_records = result.select(
        key.cast("string").alias("key"), F.to_json(F.struct(*result.columns)).alias("value")
    )
    queries = [
        _with_client_properties(_trigger(as_records.writeStream, settings), settings)
        .format(settings.format)
        .option("kafka.bootstrap.servers", settings.bootstrap_servers)
        .option("topic", settings.results_topic)
        .option("checkpointLocation", str(checkpoints / "topic"))
        .outputMode("append")
        .queryName(f"{settings.source_topic}->{settings.results_topic}")
        .start()
    ]
    if settings.parquet_path is not None:
        queries.append(
            _trigger(result.writeStream, settings)
            .format("parquet")
            .option("path", settings.parquet_path)
            .option("checkpointLocation", str(checkpoints / "parquet"))
            .outputMode("append")
            .queryName(f"{settings.source_topic}->parquet")
            .start()
        )
    return queries


def _trigger(writer: DataStreamWriter, settings: JobSettings) -> DataStreamWriter:
    if settings.available_now:
        return writer.trigger(availableNow=True)
    return writer.trigger(processingTime=f"{settings.trigger_seconds} seconds")


Pipeline = Callable[[SparkSession, JobSettings], list[StreamingQuery]]


def _property(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def main(pipeline: Pipeline, description: str, argv: Sequence[str] | None = None) -> None:
    """Command line of a pipeline module: parse settings, start it, wait until it ends."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--bootstrap-servers", required=True, metavar="HOST:PORT[,...]")
    parser.add_argument("--source-topic", required=True)
    parser.add_argument("--results-topic", required=True)
    parser.add_argument("--checkpoint-dir", required=True, help="one folder per pipeline")
    parser.add_argument("--parquet-path", help="also write the results here as Parquet")
    parser.add_argument("--format", choices=FORMATS, default=FORMAT, help="source/sink format")
    parser.add_argument("--starting-offsets", default="earliest")
    parser.add_argument("--max-offsets-per-trigger", type=int)
    parser.add_argument(
        "--available-now", action="store_true", help="process what is there, then stop"
    )
    parser.add_argument("--trigger-seconds", type=float, default=5.0)
    parser.add_argument(
        "-X",
        "--client-property",
        dest="client_properties",
        action="append",
        type=_property,
        default=[],
        metavar="KEY=VALUE",
        help="a Kafka client setting, e.g. security.protocol=SASL_SSL; a secret as"
        " sasl.password=${directory:/etc/odradek/user:password} (read from that file)",
    )
    parser.add_argument("--master", help="Spark master (default: spark-submit's, else local[*])")
    args = parser.parse_args(argv)
    values = {k: v for k, v in vars(args).items() if k != "master"}
    values["client_properties"] = tuple(values["client_properties"])
    settings = JobSettings(**values)
    spark = local_session(app_name=parser.prog, master=args.master)
    queries = pipeline(spark, settings)
    for query in queries:
        query.awaitTermination()
