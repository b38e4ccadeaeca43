"""``odradek produce TOPIC``: send lines of stdin or a file, or synthetic records, like kcat -P."""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any

from confluent_kafka import KafkaError, Message, Producer

from odradek.cli.client_options import (
    CliError,
    add_client_options,
    client_config,
    command,
    describe_kafka_error,
    key_value,
    partition_number,
    positive_int,
    status,
)
from odradek.cli.progress import Progress

COMPRESSION_TYPES = ["none", "gzip", "snappy", "lz4", "zstd"]
DEFAULT_SYNTHETIC_SIZE = 100
_MAX_POOL_BYTES = 16 * 1024 * 1024
SPREAD_MULTIPLIER = 2_654_435_761  # Knuth's multiplicative hash
LINGER_MS = 5  # small batches coalesce; lines typed by hand still go out at once

Record = tuple[bytes | None, bytes]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "produce",
        help="send records to a topic",
        description="Send one record per line of stdin or --file, or --count synthetic records.",
    )
    parser.add_argument("topic", metavar="TOPIC")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--file", type=Path, help="read records from FILE (default: stdin)")
    source.add_argument(
        "--count", type=positive_int, metavar="N", help="send N generated records instead"
    )
    parser.add_argument(
        "--size",
        type=positive_int,
        default=DEFAULT_SYNTHETIC_SIZE,
        metavar="B",
        help=f"value size of generated records (default: {DEFAULT_SYNTHETIC_SIZE})",
    )
    parser.add_argument(
        "--key-separator",
        metavar="SEP",
        help="split each line at the first SEP into key and value",
    )
    parser.add_argument(
        "--partition",
        type=partition_number,
        metavar="P",
        help="(default: chosen by the partitioner)",
    )
    parser.add_argument(
        "--header",
        dest="headers",
        type=key_value,
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="add this header to every record; repeatable",
    )
    parser.add_argument("--compression", choices=COMPRESSION_TYPES, default="none")
    parser.add_argument("--acks", choices=["0", "1", "all", "-1"], default="all")
    add_client_options(parser)
    parser.set_defaults(run=_produce)


def synthetic_records(count: int, size: int) -> Iterator[Record]:
    """``count`` keyless records of ``size`` bytes: the record number, then text-like words
    cut from ``synthetic_pool(count, size)``, which is built at once (so a benchmark that
    calls this before its clock starts does not time it)."""
    return _cut_records(synthetic_pool(count, size), count, size)


def _cut_records(pool: bytes, count: int, size: int) -> Iterator[Record]:
    spread = len(pool) - size
    for number in range(count):
        prefix = (b"%d " % number)[:size]
        start = number * SPREAD_MULTIPLIER % spread
        yield None, prefix + pool[start : start + size - len(prefix)]


def synthetic_pool(count: int, size: int) -> bytes:
    """The text synthetic records are cut from: a seeded pool of words drawn Zipf-like from
    a small vocabulary, spread over more bytes than the codecs' windows, so records compress
    as text does (lz4 about 2x, zstd about 3.5x): codecs do real work. Record ``n`` is its
    number and a space, then the pool from ``n * SPREAD_MULTIPLIER % (len(pool) - size)``."""
    rng = random.Random(0)
    letters = b"abcdefghijklmnopqrstuvwxyz"
    vocabulary = [bytes(rng.choices(letters, k=rng.randint(2, 10))) for _ in range(4096)]
    weights = [1 / rank for rank in range(1, len(vocabulary) + 1)]
    pool_size = min(_MAX_POOL_BYTES, max(64 * 1024, count * size)) + size
    return b" ".join(rng.choices(vocabulary, weights, k=pool_size // 6 + 1))


def line_records(lines: Iterable[bytes], key_separator: str | None) -> Iterator[Record]:
    """One record per line, without its line ending; split at ``key_separator`` if given."""
    separator = key_separator.encode() if key_separator else None
    for number, line in enumerate(lines, start=1):
        value = line.rstrip(b"\n").removesuffix(b"\r")
        if separator is None:
            yield None, value
            continue
        key, found, value = value.partition(separator)
        if not found:
            raise CliError(f"line {number} has no key separator {key_separator!r}")
        yield key, value


class _Deliveries:
    """Delivery reports: counts successes into ``progress`` and keeps the first failure."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.failed = 0
        self.first_error: KafkaError | None = None

    def __call__(self, error: KafkaError | None, message: Message) -> None:
        if error is None:
            self.progress.add(1, len(message))
            return
        self.failed += 1
        self.first_error = self.first_error or error


@command
def _produce(args: argparse.Namespace) -> int:
    producer = Producer(
        client_config(
            args,
            {
                "acks": args.acks,
                "compression.type": args.compression,
                "linger.ms": LINGER_MS,
                "message.timeout.ms": int(args.timeout * 1000),
            },
        )
    )
    deliveries = _Deliveries(Progress("produced", total=args.count, enabled=not args.quiet))
    target = args.topic if args.partition is None else f"{args.topic} partition {args.partition}"
    with ExitStack() as stack:
        records: Iterable[Record]
        if args.count:
            records = synthetic_records(args.count, args.size)
            source = f"{args.count} generated records of {args.size} bytes"
        elif args.file:
            records = line_records(stack.enter_context(_open(args.file)), args.key_separator)
            source = f"lines of {args.file}"
        else:
            records = line_records(sys.stdin.buffer, args.key_separator)
            source = "lines of stdin" + (" (end with Ctrl-D)" if sys.stdin.isatty() else "")
        status(args, f"Producing {source} to {target}.")
        sent = send_records(producer, args.topic, records, **_produce_options(args, deliveries))
    producer.flush()
    if deliveries.first_error is not None:
        raise CliError(
            f"{deliveries.failed} of {sent} records were not delivered to {target} "
            f"at {args.bootstrap_server}: "
            f"{describe_kafka_error(deliveries.first_error)}"
        )
    status(args, f"Produced to {target}: {deliveries.progress.summary()}.")
    return 0


def _produce_options(args: argparse.Namespace, deliveries: _Deliveries) -> dict[str, Any]:
    options: dict[str, Any] = {"on_delivery": deliveries}
    if args.partition is not None:
        options["partition"] = args.partition
    if args.headers:
        options["headers"] = [(key, value.encode()) for key, value in args.headers]
    return options


def _open(path: Path) -> IO[bytes]:
    try:
        return path.open("rb")
    except OSError as error:
        raise CliError(f"cannot read {path}: {error.strerror}") from error


def send_records(producer: Producer, topic: str, records: Iterable[Record], **options: Any) -> int:
    """Queue every record with ``produce(**options)``, waiting for room when librdkafka's
    queue is full and serving delivery reports as it goes; return how many were queued.
    """
    sent = 0
    for key, value in records:
        while True:
            try:
                producer.produce(topic, value, key, **options)
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
        sent += 1
    return sent
