"""Build a SparkSession that can read and write Odradek, for local runs and tests.

PySpark's Python workers must run the interpreter that has odradek and pyarrow,
so ``PYSPARK_PYTHON`` is pointed at this one unless already set. Spark's own
Kafka connector is added when its jars were fetched (scripts/fetch-spark-kafka-jars.sh).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pyspark import __version__ as pyspark_version
from pyspark.sql import SparkSession

from odradek.spark.data_source import register

CONNECTOR_CACHE = Path.home() / ".cache" / "odradek" / "maven"


def connector_jars(cache: Path = CONNECTOR_CACHE) -> list[Path]:
    """The spark-sql-kafka jars for this pyspark, or [] when they were not fetched."""
    folder = cache / f"spark-sql-kafka-{pyspark_version}"
    if not (folder / ".complete").exists():
        return []
    return sorted(folder.glob("*.jar"))


def local_session(
    app_name: str = "odradek",
    master: str = "local[2]",
    shuffle_partitions: int = 4,
    with_kafka_connector: bool = True,
) -> SparkSession:
    """A session with format ``odradek`` registered (and ``kafka`` when its jars are cached)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.appName(app_name)
        .master(master)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.sql.session.timeZone", "UTC")
    )
    jars = connector_jars() if with_kafka_connector else []
    if jars:
        builder = builder.config("spark.jars", ",".join(str(j) for j in jars))
    spark = builder.getOrCreate()
    register(spark)
    return spark
