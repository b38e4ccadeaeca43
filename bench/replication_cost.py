"""What replication costs the brokers: CPU per acks=all Produce request, one broker against
three, Odradek against Apache Kafka in the same run.

For each system, and for one broker and then three (every run started fresh and pinned
to the first CPU, as compare.py does): create topic ``bench`` (6 partitions, replicated
to every broker, ``min.insync.replicas`` 2 on three) and an idle topic of
``--idle-partitions`` partitions replicated alike (followers fetch it too, as they fetch
``__consumer_offsets`` in compare.py's ``replicated`` workload), then send ``--requests``
Produce requests one at a time: each one lz4 batch of ``--batch-records`` records of
``--record-size`` bytes for the next partition in turn, acks=all, the next sent when the
last is acknowledged. The same requests go out in the same order whatever else runs on
the machine, so the brokers' CPU time over them (etcd's too, for an Odradek cluster) is a
measure that holds on a busy machine, where throughput does not. Prints CPU ms per
request and CPU s per GB, and the ratio three brokers / one broker (at most 3.5 is the
aim: three copies, and the follower's fetches); writes JSON to
bench/results/replication-cost-<stamp>.json. See bench/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import os
import signal
import sys
import tempfile
from contextlib import ExitStack
from pathlib import Path

from confluent_kafka import Producer
from cprofiled import profiled_brokers, top_functions
from load_workers import BenchError
from proc_stats import cpu_split, pinned, total_cpu_seconds
from running_system import RunningSystem, create_topic
from scale_report import Measure, say, table, write_json
from secured_listener import PLAINTEXT
from systems import STARTERS

from odradek.cli.produce_command import synthetic_records

TOPIC = "bench"
IDLE_TOPIC = "idle"
PARTITIONS = 6
WARM_UP_REQUESTS = 200
"""Unmeasured requests first: Kafka's JIT compiles its hot paths, sessions settle."""

MEASURES: tuple[Measure, ...] = (
    ("ms_per_request_1", "one broker: CPU ms per request", False),
    ("ms_per_request_3", "three brokers: CPU ms per request", False),
    ("s_per_gb_1", "one broker: CPU s per GB", False),
    ("s_per_gb_3", "three brokers: CPU s per GB", False),
    ("three_over_one", "three brokers / one broker", False),
)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    broker_cpus, load_cpus = cpu_split()
    os.sched_setaffinity(0, load_cpus)
    results: dict[str, dict[str, float]] = {}
    try:
        for name in args.systems.split(","):
            figures: dict[str, float] = {}
            for brokers in (1, 3):
                say(f"== {name}: {brokers} broker(s)")
                with (
                    tempfile.TemporaryDirectory(prefix=f"replication-{name}-") as workdir,
                    ExitStack() as stack,
                ):
                    if args.cprofile:
                        stack.enter_context(profiled_brokers(args.cprofile / f"{brokers}"))
                    with pinned(broker_cpus):  # the brokers only: the producer runs elsewhere
                        start = STARTERS[name](Path(workdir), brokers, PLAINTEXT)
                        system = stack.enter_context(start)
                    cpu_ms = _cpu_ms_per_request(system, brokers, args)
                request_bytes = args.batch_records * args.record_size
                figures[f"ms_per_request_{brokers}"] = cpu_ms
                figures[f"s_per_gb_{brokers}"] = cpu_ms / 1e3 / (request_bytes / 1e9)
                say(f"{name}, {brokers} broker(s): {cpu_ms:.3f} CPU ms per request")
            figures["three_over_one"] = figures["ms_per_request_3"] / figures["ms_per_request_1"]
            results[name] = figures
    except BenchError as error:
        print(f"replication_cost: {error}", file=sys.stderr)
        return 1
    context = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "requests": args.requests,
        "batch_records": args.batch_records,
        "record_size": args.record_size,
        "idle_partitions": args.idle_partitions,
        "load_average": os.getloadavg(),
    }
    print(table(MEASURES, results))
    write_json("replication-cost", context, results)
    if args.cprofile:
        for brokers in (1, 3):
            say(f"where {brokers} broker(s) spent their CPU (cProfile, CPU clock):")
            print(top_functions(args.cprofile / f"{brokers}"))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=2000, help="measured (default 2000)")
    parser.add_argument("--batch-records", type=int, default=32, help="per request (default 32)")
    parser.add_argument("--record-size", type=int, default=1024, help="bytes (default 1024)")
    parser.add_argument(
        "--idle-partitions", type=int, default=50, help="of the idle topic (default 50)"
    )
    parser.add_argument("--systems", default="odradek,kafka", help="which, in this order")
    parser.add_argument(
        "--cprofile",
        type=Path,
        metavar="DIR",
        help="profile Odradek's brokers into DIR (cprofiled.py) and print where their CPU "
        "went; several times slower, so its figures are not comparable",
    )
    return parser


def _cpu_ms_per_request(system: RunningSystem, brokers: int, args: argparse.Namespace) -> float:
    """Create the topics, warm up, then the brokers' CPU ms per measured request."""
    configs = {"min.insync.replicas": "2"} if brokers > 1 else {}
    create_topic(system.client, TOPIC, PARTITIONS, brokers, configs)
    if args.idle_partitions:
        create_topic(system.client, IDLE_TOPIC, args.idle_partitions, brokers, {})
    producer = Producer(
        {
            **system.client,
            "acks": "all",
            "compression.type": "lz4",
            "linger.ms": 1000,  # nothing leaves before flush(): one batch per request
            "batch.size": 2 * args.batch_records * args.record_size,
        }
    )
    values = [value for _, value in synthetic_records(args.batch_records, args.record_size)]
    _send(producer, values, WARM_UP_REQUESTS)
    requests: int = args.requests
    before = total_cpu_seconds(system.pids)
    _send(producer, values, requests)
    return (total_cpu_seconds(system.pids) - before) * 1e3 / requests


def _send(producer: Producer, values: list[bytes], requests: int) -> None:
    """``requests`` Produce requests, one at a time, each one batch of ``values``."""
    failures: list[str] = []

    def delivered(error: object, _: object) -> None:
        if error is not None:
            failures.append(str(error))

    for number in range(requests):
        for value in values:
            producer.produce(TOPIC, value, partition=number % PARTITIONS, on_delivery=delivered)
        if producer.flush(60) or failures:
            raise BenchError(f"request {number} failed: {failures[:1] or 'no answer in 60 s'}")
        if number and number % 500 == 0:
            say(f"{number} of {requests} requests")


if __name__ == "__main__":
    sys.exit(main())
