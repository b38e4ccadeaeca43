"""``odradek demo clickstream|metrics TOPIC``: produce realistic keyed events at a chosen rate.

The events feed the example pipelines in odradek.spark.pipelines. With a seed
and ``--start-time`` the stream is reproducible; event times advance by
1/rate per event, and ``--rate`` also paces sending in real time unless
``--as-fast-as-possible``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Protocol

from confluent_kafka import KafkaError, Message, Producer

from odradek.cli.client_options import (
    CliError,
    add_client_options,
    client_config,
    command,
    describe_kafka_error,
    positive_int,
    status,
)
from odradek.cli.produce_command import Record, send_records
from odradek.spark.pipelines.clickstream import page_views
from odradek.spark.pipelines.host_metrics import metric_samples

DEFAULT_RATE = 100.0


class _Event(Protocol):
    def key(self) -> bytes: ...
    def encode(self) -> bytes: ...


GENERATORS: dict[str, Callable[[int, int, float], Iterator[_Event]]] = {
    "clickstream": page_views,
    "metrics": metric_samples,
}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="produce demo events for the Spark pipelines",
        description="Produce page views (clickstream) or host metric samples (metrics), "
        "keyed by user or host, as JSON.",
    )
    parser.add_argument(
        "kind", choices=sorted(GENERATORS), metavar="KIND", help="clickstream or metrics"
    )
    parser.add_argument("topic", metavar="TOPIC")
    parser.add_argument(
        "--rate",
        type=float,
        default=DEFAULT_RATE,
        metavar="PER_SECOND",
        help=f"events per second (default: {DEFAULT_RATE:g})",
    )
    parser.add_argument(
        "--count", type=positive_int, metavar="N", help="stop after N events (default: never)"
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument(
        "--start-time",
        type=int,
        metavar="MS",
        help="event time of the first event, ms since the epoch (default: now)",
    )
    parser.add_argument(
        "--as-fast-as-possible",
        action="store_true",
        help="send without pacing; event times still advance by 1/rate",
    )
    add_client_options(parser)
    parser.set_defaults(run=_demo)


def paced(records: Iterator[Record], rate: float) -> Iterator[Record]:
    """``records`` released at ``rate`` per second of wall-clock time."""
    started = time.monotonic()
    for n, record in enumerate(records):
        delay = started + n / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        yield record


@command
def _demo(args: argparse.Namespace) -> int:
    if args.rate <= 0:
        raise CliError(f"--rate must be > 0, not {args.rate:g}")
    start_ms = args.start_time if args.start_time is not None else int(time.time() * 1000)
    events = GENERATORS[args.kind](args.seed, start_ms, args.rate)
    records: Iterator[Record] = ((e.key(), e.encode()) for e in islice(events, args.count))
    if not args.as_fast_as_possible:
        records = paced(records, args.rate)
    failures: list[KafkaError] = []

    def on_delivery(error: KafkaError | None, _: Message) -> None:
        if error is not None:
            failures.append(error)

    producer = Producer(client_config(args, {"linger.ms": 5}))
    status(args, f"Producing {args.kind} events to {args.topic} at {args.rate:g}/s (Ctrl-C stops).")
    try:
        sent = send_records(producer, args.topic, records, on_delivery=on_delivery)
    finally:
        producer.flush(args.timeout)
    if failures:
        raise CliError(
            f"{len(failures)} of {sent} events were not delivered to {args.topic}: "
            f"{describe_kafka_error(failures[0])}"
        )
    status(args, f"Produced {sent} {args.kind} events to {args.topic}.")
    return 0
