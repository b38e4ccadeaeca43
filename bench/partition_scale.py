"""Partition scale: Odradek against Apache Kafka with many partitions, in the same run.

For each system in turn: start it fresh (one broker, or three with every partition
replicated three times), pinned to the first CPU as compare.py does, and measure

- how long creating a topic of ``--partitions`` partitions takes (5,000 at a time), until
  every partition has a leader and a full ISR and its leader answers ListOffsets (a
  leader whose log is still being made does not);
- the brokers' resident memory and open file descriptors, idle once it exists, and
  again after the load below;
- the latency of a Metadata request naming the topic (every partition in the answer);
- produce and then consume throughput with the records spread over every partition
  (keyed: the partitioner sends each partition its share);
- start-up after a clean stop, and recovery after kill -9 of every broker: the time from
  starting the processes again until every partition is led and has taken a write
  (acks=all).

Prints a table with Odradek/Kafka ratios and writes the figures as JSON to
bench/results/partition-scale-<stamp>.json. See bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import signal
import sys
import tempfile
import time
from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from confluent_kafka import KafkaException, Producer, TopicPartition
from confluent_kafka.admin import (  # type: ignore[attr-defined]
    AdminClient,
    NewPartitions,
    NewTopic,
    OffsetSpec,
)
from load_workers import BenchError, ConsumerJob, ProducerJob, consume, produce, run_phase
from measure import percentile
from proc_stats import cpu_split, open_descriptors, pinned, rss_bytes
from running_system import RunningSystem, topic_settled
from scale_report import Measure, say, table, write_json
from secured_listener import PLAINTEXT
from systems import STARTERS, Starter

from odradek.cli.child_process import wait_until

TOPIC = "scale"
READY_TIMEOUT_S = 900.0
METADATA_REQUESTS = 20
CREATE_STEP = 5000
MIB = 1024 * 1024

MEASURES: tuple[Measure, ...] = (
    ("create_s", "create the topic (s)", False),
    ("idle_rss_mib", "broker RSS, idle (MiB)", False),
    ("idle_fds", "open descriptors, idle", False),
    ("metadata_median_ms", "Metadata, median (ms)", False),
    ("metadata_max_ms", "Metadata, slowest of 20 (ms)", False),
    ("produce_records_s", "produce (records/s)", True),
    ("consume_records_s", "consume (records/s)", True),
    ("loaded_rss_mib", "broker RSS, after the load (MiB)", False),
    ("loaded_fds", "open descriptors, after the load", False),
    ("restart_s", "start-up after a clean stop (s)", False),
    ("recovery_s", "recovery after kill -9 (s)", False),
)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    broker_cpus, load_cpus = cpu_split()
    os.sched_setaffinity(0, load_cpus)
    replication = min(args.brokers, 3)
    results: dict[str, dict[str, float]] = {}
    try:
        for name in args.systems.split(","):
            layout = f"{args.partitions} partitions, {args.brokers} broker(s), RF {replication}"
            say(f"== {name}: {layout}")
            with tempfile.TemporaryDirectory(prefix=f"scale-{name}-") as workdir:
                results[name] = _measure(
                    STARTERS[name], Path(workdir), args, replication, broker_cpus
                )
    except BenchError as error:
        print(f"partition_scale: {error}", file=sys.stderr)
        return 1
    context = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "partitions": args.partitions,
        "brokers": args.brokers,
        "replication": replication,
        "records": args.records,
        "record_size": args.record_size,
        "load_average": os.getloadavg(),
    }
    print(table(MEASURES, results))
    write_json("partition-scale", context, results)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--brokers", type=int, default=1, choices=(1, 3))
    parser.add_argument("--records", type=int, default=1_000_000, help="records produced")
    parser.add_argument("--record-size", type=int, default=100, help="bytes per record")
    parser.add_argument("--systems", default="odradek,kafka", help="which, in this order")
    return parser


def _measure(
    start: Starter,
    workdir: Path,
    args: argparse.Namespace,
    replication: int,
    broker_cpus: set[int],
) -> dict[str, float]:
    figures: dict[str, float] = {}
    with ExitStack() as stack:
        with pinned(broker_cpus):  # the brokers only: the load runs on the other CPUs
            system = stack.enter_context(start(workdir, args.brokers, PLAINTEXT))
        # librdkafka gives up on any request after socket.timeout.ms (60 s; at most 300 s)
        admin = AdminClient({**system.client, "log_level": 0, "socket.timeout.ms": 300_000})
        say(f"creating {TOPIC} with {args.partitions} partitions")
        started = time.monotonic()
        _create_in_steps(admin, args.partitions, replication)
        _wait_settled(admin, args.partitions, replication)
        figures["create_s"] = time.monotonic() - started
        time.sleep(5)  # whatever the creation left to do in the background
        figures |= _footprint(system, "idle")
        figures |= _metadata_latency(admin)
        figures |= _load(system, args)
        figures |= _footprint(system, "loaded")
        for kind, stop in (("restart", _stop_cleanly), ("recovery", _kill)):
            say(f"{kind}: stopping every broker, then starting them again")
            stop(system)
            with pinned(broker_cpus):
                figures[f"{kind}_s"] = _start_again(system, args.partitions, replication)
    say(", ".join(f"{key} {value:.4g}" for key, value in figures.items()))
    return figures


def _create_in_steps(admin: AdminClient, partitions: int, replication: int) -> None:
    """Create the topic, then add partitions, CREATE_STEP at a time: Kafka's controller
    refuses an operation of more than 10,000 records ("excessively large batch")."""
    count = min(partitions, CREATE_STEP)
    topic = NewTopic(TOPIC, num_partitions=count, replication_factor=replication)
    admin.create_topics([topic], request_timeout=300)[TOPIC].result()
    while count < partitions:
        count = min(partitions, count + CREATE_STEP)
        admin.create_partitions([NewPartitions(TOPIC, count)], request_timeout=300)[TOPIC].result()


def _wait_settled(admin: AdminClient, partitions: int, replication: int) -> None:
    wait_until(
        lambda: topic_settled(admin, TOPIC, partitions, replication),
        READY_TIMEOUT_S,
        f"every partition of {TOPIC} led, with a full ISR",
        interval=0.5,
    )
    wait_until(
        lambda: _every_leader_answers(admin, partitions),
        READY_TIMEOUT_S,
        f"every partition of {TOPIC} answering ListOffsets",
        interval=0.5,
    )


def _every_leader_answers(admin: AdminClient, partitions: int) -> bool:
    """Whether each partition's leader answers ListOffsets: Metadata names a leader
    before its log exists (Odradek makes a large topic's logs in the background)."""
    wanted = {TopicPartition(TOPIC, p): OffsetSpec.latest() for p in range(partitions)}
    try:
        for answer in admin.list_offsets(wanted, request_timeout=60).values():
            answer.result()
    except KafkaException:
        return False
    return True


def _footprint(system: RunningSystem, moment: str) -> dict[str, float]:
    pids = [process.pid for process in system.brokers]
    return {
        f"{moment}_rss_mib": sum(rss_bytes(pid) for pid in pids) / MIB,
        f"{moment}_fds": sum(open_descriptors(pid) for pid in pids),
    }


def _metadata_latency(admin: AdminClient) -> dict[str, float]:
    seconds = []
    for _ in range(METADATA_REQUESTS):
        started = time.monotonic()
        admin.list_topics(TOPIC, timeout=30)
        seconds.append(time.monotonic() - started)
    return {
        "metadata_median_ms": percentile(seconds, 0.5) * 1000,
        "metadata_max_ms": max(seconds) * 1000,
    }


def _load(system: RunningSystem, args: argparse.Namespace) -> dict[str, float]:
    job = ProducerJob(TOPIC, args.records, args.record_size, "lz4", "1", 5, 65536, keyed=True)
    produced = run_phase("produce", produce, system.client, job, system.pids)
    consumed = run_phase(
        "consume", consume, system.client, ConsumerJob(TOPIC, args.records), system.pids
    )
    return {
        "produce_records_s": produced.moved.records / produced.moved.seconds,
        "consume_records_s": consumed.moved.records / consumed.moved.seconds,
    }


def _stop_cleanly(system: RunningSystem) -> None:
    """SIGTERM, and wait for the shutdown however long it takes (a killed one is refused)."""
    for process in system.brokers:
        if process.stop(READY_TIMEOUT_S) == -signal.SIGKILL:
            raise BenchError(f"{process.name} did not stop within {READY_TIMEOUT_S:g} s")


def _kill(system: RunningSystem) -> None:
    for process in system.brokers:
        process.kill()


def _start_again(system: RunningSystem, partitions: int, replication: int) -> float:
    """Start every broker; seconds until every partition is led and has taken a write."""
    started = time.monotonic()
    for process in system.brokers:
        process.start()
    admin = AdminClient({**system.client, "log_level": 0})
    _wait_settled(admin, partitions, replication)
    _write_every_partition(system.client, partitions)
    return time.monotonic() - started


def _write_every_partition(client: Mapping[str, str], partitions: int) -> None:
    """One record to each partition with acks=all, librdkafka retrying until it lands."""
    producer = Producer(
        {
            **client,
            "acks": "all",
            "linger.ms": 5,
            "message.timeout.ms": int(READY_TIMEOUT_S * 1000),
            "log_level": 0,  # leaders not known yet are expected: delivery reports tell
        }
    )
    failures: list[str] = []

    def delivered(error: Any, _message: Any) -> None:
        if error is not None:
            failures.append(str(error))

    for partition in range(partitions):
        producer.produce(TOPIC, b"probe", partition=partition, on_delivery=delivered)
        producer.poll(0)
    if producer.flush(READY_TIMEOUT_S) or failures:
        raise BenchError(f"writes to every partition failed: {failures[:1]}")


if __name__ == "__main__":
    sys.exit(main())
