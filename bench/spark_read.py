"""Read throughput of format ``odradek`` (the Python data source) against Spark's own
``kafka`` source, on the same broker, topic and local Spark; prints the ratio.

    python bench/spark_read.py --records 1000000 --record-size 200 --partitions 4

Starts `odradek broker` on free loopback ports with a temporary data dir, fills
a topic once, then times a full batch read (``count()`` over every column, so
each record is materialised) with each format, ``--repeat`` times, best run
kept. Needs the connector jars (scripts/setup.sh fetches them).
"""

from __future__ import annotations

import argparse
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from confluent_kafka import Producer
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from odradek.spark.session import connector_jars, local_session


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_broker(data_dir: Path) -> tuple[subprocess.Popen[bytes], str]:
    port, http_port = free_port(), free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from odradek.cli.main import main; main()",
            "broker",
            "--set",
            f"listeners=PLAINTEXT://127.0.0.1:{port}",
            "--set",
            f"log.dirs={data_dir}",
            "--set",
            f"http.listener=127.0.0.1:{http_port}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/readyz", timeout=1):
                return process, f"127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise SystemExit("broker did not become ready")


def fill(bootstrap: str, topic: str, partitions: int, records: int, size: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 1 << 20})
    value = b"x" * size
    for n in range(records):
        while True:
            try:
                producer.produce(topic, value, b"%d" % (n % 1000))
                break
            except BufferError:
                producer.poll(0.1)
    assert producer.flush(120) == 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=500_000)
    parser.add_argument("--record-size", type=int, default=200)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not connector_jars():
        raise SystemExit("Spark's Kafka connector jars are missing: run scripts/setup.sh")
    workdir = Path(tempfile.mkdtemp(prefix="odradek-bench-spark-"))
    broker, bootstrap = start_broker(workdir / "data")
    try:
        fill(bootstrap, "bench", args.partitions, args.records, args.record_size)
        spark = local_session(app_name="bench-spark-read", master="local[2]")
        spark.sparkContext.setLogLevel("ERROR")
        best: dict[str, float] = {}
        for source_format in ("odradek", "kafka"):
            df = (
                spark.read.format(source_format)
                .option("kafka.bootstrap.servers", bootstrap)
                .option("subscribe", "bench")
                .load()
            )
            for _ in range(args.repeat):
                started = time.monotonic()
                count = df.selectExpr("sum(length(value)) + sum(length(key)) + count(*)").first()
                elapsed = time.monotonic() - started
                assert count is not None
                best[source_format] = min(best.get(source_format, elapsed), elapsed)
            rate = args.records / best[source_format]
            megabytes = rate * args.record_size / 1e6
            print(f"{source_format:8} {rate:12,.0f} records/s  {megabytes:8.1f} MB/s")
        print(f"ratio odradek/kafka: {best['kafka'] / best['odradek']:.2f}")
    finally:
        broker.terminate()
        broker.wait(15)
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
