"""Build a SparkSession that can read and write Odradek, for local runs and tests.

PySpark's Python workers must run the interpreter that has odradek and pyarrow,
so ``PYSPARK_PYTHON`` is pointed at this one unless already set. Spark's own
Kafka connector is added when its jars were fetched (scripts/fetch-spark-kafka-jars.sh).

Spark puts ``$SPARK_HOME/python/lib/pyspark.zip`` first on its Python workers'
path; imports from a zip are compiled anew at every start, which on a busy
machine overruns the 10 s in which a new worker must connect back to the JVM
("Python worker failed to connect back"). :func:`local_session` therefore runs
Spark from a home that shares pyspark's ``bin``/``jars`` but has no zip, so
workers import the installed, byte-compiled pyspark.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import pyspark
from pyspark import __version__ as pyspark_version
from pyspark.sql import SparkSession

from odradek.spark.data_source import register

CACHE = Path.home() / ".cache" / "odradek"
CONNECTOR_CACHE = CACHE / "maven"


def connector_jars(cache: Path = CONNECTOR_CACHE) -> list[Path]:
    """The spark-sql-kafka jars for this pyspark, or [] when they were not fetched."""
    folder = cache / f"spark-sql-kafka-{pyspark_version}"
    if not (folder / ".complete").exists():
        return []
    return sorted(folder.glob("*.jar"))


def spark_home_without_zip(cache: Path = CACHE) -> Path:
    """A SPARK_HOME with links to the installed pyspark's bin/ and jars/, and no python/;
    one per installation, as each virtual environment (checkout) has its own pyspark."""
    installed = Path(pyspark.__file__).parent
    digest = hashlib.sha256(str(installed).encode()).hexdigest()[:12]
    home = cache / f"spark-home-{pyspark_version}-{digest}"
    home.mkdir(parents=True, exist_ok=True)
    for name in ("bin", "jars"):
        link = home / name
        if not link.is_symlink():
            link.symlink_to(installed / name)
    return home


def local_session(
    app_name: str = "odradek",
    master: str | None = "local[2]",
    shuffle_partitions: int = 4,
    with_kafka_connector: bool = True,
) -> SparkSession:
    """A session with format ``odradek`` registered (and ``kafka`` when its jars are cached).

    ``master=None`` keeps whatever spark-submit (or Spark's default) chose.
    """
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_HOME", str(spark_home_without_zip()))
    builder = (
        SparkSession.builder.appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .config("spark.sql.session.timeZone", "UTC")
    )
    if master is not None:
        builder = builder.master(master)
    jars = connector_jars() if with_kafka_connector else []
    if jars:
        builder = builder.config("spark.jars", ",".join(str(j) for j in jars))
    spark = builder.getOrCreate()
    register(spark)
    return spark
