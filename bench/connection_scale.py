"""Connection scale: Odradek against Apache Kafka holding thousands of producer
connections, in the same run.

For each system in turn: start one broker fresh, pinned to the first CPU as compare.py
does, create a topic, and measure

- the time to open ``--connections`` connections, each served once;
- the broker's resident memory before and with them open, and so per connection;
- a paced load: every connection producing ``--rate`` one-record requests a second
  (acks=1) for ``--seconds``: records/s acknowledged, latency median, p99 and slowest
  (from when each request was due), broker CPU per second;
- flat out: every connection sending its next request as soon as the last is answered,
  for ``--seconds``: records/s and p99, with the load generator's own CPU beside it
  (near 1 core-second a second, the client is the limit, not the broker);

and that the topic's offsets add up to every request acknowledged. The connections
speak the protocol themselves (produce_connections.py). Prints a table with
Odradek/Kafka ratios and writes the figures to bench/results/connection-scale-<stamp>.json.
See bench/README.md.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import math
import os
import resource
import signal
import sys
import tempfile
from collections.abc import Coroutine
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, KafkaException, TopicPartition
from load_workers import BenchError
from measure import percentile
from proc_stats import cpu_split, pinned, rss_bytes, total_cpu_seconds
from produce_connections import (
    Load,
    LoadError,
    ProducerConnection,
    flat_out,
    open_connections,
    paced,
    produce_frames,
)
from running_system import RunningSystem, create_topic
from scale_report import Measure, say, table, write_json
from secured_listener import PLAINTEXT
from systems import STARTERS, Starter

from odradek.cli.broker_command import raise_open_file_limit

TOPIC = "connections"
KIB = 1024
MIB = 1024 * 1024

MEASURES: tuple[Measure, ...] = (
    ("connect_s", "open every connection (s)", False),
    ("idle_rss_mib", "broker RSS, no connections (MiB)", False),
    ("connected_rss_mib", "broker RSS, every connection open (MiB)", False),
    ("per_connection_kib", "broker memory per connection (KiB)", False),
    ("paced_records_s", "paced: records/s acknowledged", True),
    ("paced_p50_ms", "paced: latency median (ms)", False),
    ("paced_p99_ms", "paced: latency p99 (ms)", False),
    ("paced_max_ms", "paced: slowest (ms)", False),
    ("paced_broker_cpu", "paced: broker CPU (core-s per s)", False),
    ("flat_records_s", "flat out: records/s", True),
    ("flat_p99_ms", "flat out: round trip p99 (ms)", False),
    ("flat_broker_cpu", "flat out: broker CPU (core-s per s)", False),
    ("flat_client_cpu", "flat out: load generator CPU (core-s per s)", False),
    ("loaded_rss_mib", "broker RSS, after the load (MiB)", False),
)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    _allow_descriptors(args.connections)
    broker_cpus, load_cpus = cpu_split()
    os.sched_setaffinity(0, load_cpus)
    results: dict[str, dict[str, float]] = {}
    try:
        for name in args.systems.split(","):
            say(f"== {name}: {args.connections} connections, {args.partitions} partitions")
            with tempfile.TemporaryDirectory(prefix=f"connections-{name}-") as workdir:
                results[name] = _measure(STARTERS[name], Path(workdir), args, broker_cpus)
    except (BenchError, LoadError, KafkaException, OSError) as error:
        print(f"connection_scale: {error}", file=sys.stderr)
        return 1
    context = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "connections": args.connections,
        "partitions": args.partitions,
        "rate_per_connection": args.rate,
        "seconds": args.seconds,
        "record_size": args.record_size,
        "load_average": os.getloadavg(),
    }
    print(table(MEASURES, results))
    write_json("connection-scale", context, results)
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--connections", type=int, default=5000)
    parser.add_argument("--partitions", type=int, default=100, help="of the topic written")
    parser.add_argument("--rate", type=float, default=1.0, help="requests/s per connection")
    parser.add_argument("--seconds", type=float, default=60.0, help="of each load phase")
    parser.add_argument("--record-size", type=int, default=100, help="bytes per record")
    parser.add_argument("--systems", default="odradek,kafka", help="which, in this order")
    return parser


def _allow_descriptors(connections: int) -> None:
    """This process holds every connection: lift its limit on open files as a broker does."""
    limit = raise_open_file_limit()
    if limit != resource.RLIM_INFINITY and limit < connections + 100:
        raise SystemExit(
            f"connection_scale: {connections} connections need a limit on open files above "
            f"{connections + 100} (the hard limit is {limit}: ulimit -Hn)"
        )


def _measure(
    start: Starter, workdir: Path, args: argparse.Namespace, broker_cpus: set[int]
) -> dict[str, float]:
    with ExitStack() as stack:
        with pinned(broker_cpus):  # the broker only: the load runs on the other CPUs
            system = stack.enter_context(start(workdir, 1, PLAINTEXT))
        create_topic(system.client, TOPIC, args.partitions, 1, {})
        idle_rss = _broker_rss(system)
        figures = {"idle_rss_mib": idle_rss / MIB}
        figures |= asyncio.run(_load(system, args, idle_rss))
        _check_offsets(system, args.partitions, figures["paced_acked"] + figures["flat_acked"])
    say(", ".join(f"{key} {value:.4g}" for key, value in figures.items()))
    return figures


async def _load(
    system: RunningSystem, args: argparse.Namespace, idle_rss: float
) -> dict[str, float]:
    host, port = system.bootstrap.rsplit(":", 1)
    frames = produce_frames(TOPIC, args.partitions, args.record_size)
    loop = asyncio.get_running_loop()
    say(f"opening {args.connections} connections")
    started = loop.time()
    connections: list[ProducerConnection] = []
    try:
        await open_connections(host, int(port), args.connections, frames, TOPIC, connections)
        figures = {"connect_s": loop.time() - started}
        await asyncio.sleep(2)  # whatever the connections left the broker to do
        connected_rss = _broker_rss(system)
        figures["connected_rss_mib"] = connected_rss / MIB
        figures["per_connection_kib"] = (connected_rss - idle_rss) / args.connections / KIB
        say(f"paced: {args.rate:g} requests/s on each connection for {args.seconds:g} s")
        figures |= await _phase(system, "paced", paced(connections, args.rate, args.seconds))
        say(f"flat out for {args.seconds:g} s")
        figures |= await _phase(system, "flat", flat_out(connections, args.seconds))
        figures["loaded_rss_mib"] = _broker_rss(system) / MIB
    finally:
        for connection in connections:
            connection.close()
    return figures


async def _phase(
    system: RunningSystem, phase: str, load: Coroutine[Any, Any, Load]
) -> dict[str, float]:
    """The phase's figures, with the broker's and the load generator's CPU seconds per
    second while it ran."""
    before = total_cpu_seconds(system.broker_pids)
    result = await load
    broker_cpu = total_cpu_seconds(system.broker_pids) - before
    return {
        f"{phase}_acked": result.acked,
        f"{phase}_records_s": result.acked / result.seconds,
        f"{phase}_p50_ms": percentile(result.latencies, 0.5) * 1000,
        f"{phase}_p99_ms": percentile(result.latencies, 0.99) * 1000,
        f"{phase}_max_ms": max(result.latencies, default=math.nan) * 1000,
        f"{phase}_broker_cpu": broker_cpu / result.seconds,
        f"{phase}_client_cpu": result.client_cpu_seconds / result.seconds,
    }


def _broker_rss(system: RunningSystem) -> float:
    return float(sum(rss_bytes(pid) for pid in system.broker_pids))


def _check_offsets(system: RunningSystem, partitions: int, acked: float) -> None:
    """Every acknowledged request appended one record: the end offsets must add up."""
    consumer = Consumer({**system.client, "group.id": "connection-scale-check"})
    try:
        total = sum(
            consumer.get_watermark_offsets(TopicPartition(TOPIC, partition), timeout=30)[1]
            for partition in range(partitions)
        )
    finally:
        consumer.close()
    if total != acked:
        raise BenchError(f"{acked:.0f} records acknowledged but {total} in the topic")


if __name__ == "__main__":
    sys.exit(main())
