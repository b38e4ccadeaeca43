"""Kafka's own load generators (kafka-producer-perf-test, kafka-consumer-perf-test) as phases.

The Java client has no per-record Python work, so these phases show what a
broker sustains when the client is not the limit. They run the classes the
shell scripts run, from the jars kafka_dist.py fetched.
"""

from __future__ import annotations

import itertools
import re
import subprocess
from pathlib import Path

from kafka_dist import LOG4J_CONFIG, kafka_libs, write_properties
from load_workers import BenchError, ConsumerJob, Moved, PhaseResult, ProducerJob
from proc_stats import total_cpu_seconds
from running_system import RunningSystem

from odradek.cli.produce_command import synthetic_records

PRODUCER = "org.apache.kafka.tools.ProducerPerformance"
CONSUMER = "org.apache.kafka.tools.ConsumerPerformance"
JVM_OPTIONS = ("-Xmx512m", f"-Dlog4j2.configurationFile={LOG4J_CONFIG}")
PAYLOADS = 4096
# "100000 records sent, 49975.0 records/sec (48.80 MB/sec), ..."
_PRODUCED = re.compile(r"(\d+) records sent, ([\d.]+) records/sec")


def write_payloads(path: Path, record_size: int) -> Path:
    """Synthetic records, one a line, for ``--payload-file``: the Python producer's data."""
    lines = (value for _, value in synthetic_records(PAYLOADS, record_size))
    path.write_bytes(b"\n".join(lines))
    return path


def client_config(path: Path, running: RunningSystem) -> Path:
    """The Java client's settings for ``running``'s clients' listener, for --command-config."""
    return write_properties(path, running.security.java_client_settings())


def java_produce(
    running: RunningSystem, job: ProducerJob, payloads: Path, config: Path
) -> PhaseResult:
    """ProducerPerformance at full speed with the job's producer settings."""
    properties = {
        "bootstrap.servers": running.bootstrap,
        "acks": job.acks,
        "linger.ms": str(job.linger_ms),
        "batch.size": str(job.batch_size),
        "compression.type": job.compression,
    }
    arguments = ["--topic", job.topic, "--num-records", str(job.records), "--throughput", "-1"]
    arguments += ["--payload-file", str(payloads), "--command-config", str(config)]
    arguments += ["--producer-props", *(f"{key}={value}" for key, value in properties.items())]
    output, cpu_seconds = _run(PRODUCER, arguments, running.pids)
    records, rate = parse_producer_summary(output)
    return PhaseResult(Moved(records, records * job.record_size, records / rate), cpu_seconds)


def java_consume(
    running: RunningSystem, job: ConsumerJob, record_size: int, config: Path
) -> PhaseResult:
    """ConsumerPerformance reading ``job.records`` records (it joins a consumer group)."""
    arguments = ["--bootstrap-server", running.bootstrap, "--topic", job.topic]
    arguments += ["--messages", str(job.records), "--timeout", "60000"]
    arguments += ["--command-config", str(config)]
    output, cpu_seconds = _run(CONSUMER, arguments, running.pids)
    records, fetch_ms = parse_consumer_summary(output)
    return PhaseResult(Moved(records, records * record_size, fetch_ms / 1000), cpu_seconds)


def parse_producer_summary(output: str) -> tuple[int, float]:
    """(records sent, records/s) from ProducerPerformance's last summary line."""
    found = _PRODUCED.findall(output)
    if not found:
        raise BenchError(f"no summary from ProducerPerformance:\n{output[-2000:]}")
    records, rate = found[-1]
    return int(records), float(rate)


def parse_consumer_summary(output: str) -> tuple[int, float]:
    """(records consumed, fetch time in ms: without the group join) from ConsumerPerformance."""
    lines = [line for line in output.splitlines() if line.strip()]
    for header, values in itertools.pairwise(lines):
        if header.startswith("start.time"):
            row = dict(zip(header.split(", "), values.split(", "), strict=True))
            return int(row["data.consumed.in.nMsg"]), float(row["fetch.time.ms"])
    raise BenchError(f"no summary from ConsumerPerformance:\n{output[-2000:]}")


def _run(main_class: str, arguments: list[str], pids: tuple[int, ...]) -> tuple[str, float]:
    """Run a Kafka tool; its output and the CPU seconds ``pids`` used meanwhile."""
    command = ["java", *JVM_OPTIONS, "-cp", f"{kafka_libs()}/*", main_class, *arguments]
    before = total_cpu_seconds(pids)
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    cpu_seconds = total_cpu_seconds(pids) - before
    if result.returncode != 0:
        raise BenchError(f"{main_class} exited with {result.returncode}:\n{result.stderr[-2000:]}")
    return result.stdout, cpu_seconds
