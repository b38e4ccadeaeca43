"""Produce then consume throughput of one `odradek broker`, and the broker's CPU cost per GB.

Starts a broker on free loopback ports with a temporary data dir, creates a
topic, then runs each phase in its own process with confluent-kafka: a
producer sending synthetic records (lz4, linger.ms=5, large batches), then a
consumer reading them all back from the beginning. For each phase it prints
records/s, MB/s (10^6 bytes of record values) and the broker's CPU seconds
(user + system, from /proc/<pid>/stat) per GB (10^9 bytes). The broker and the
data dir are removed however the run ends. See bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

from load_workers import (
    BenchError,
    ConsumerJob,
    PhaseResult,
    ProducerJob,
    consume,
    produce,
    run_phase,
)
from odradek_system import odradek_broker
from proc_stats import cpu_split, pinned
from running_system import create_topic

from odradek.broker.protocol.compression import CODEC_NAMES
from odradek.broker.protocol.records import HEADER_SIZE, read_header

TOPIC = "bench"
STORED_SAMPLE_BYTES = 64 * 1024 * 1024


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # SIGTERM unwinds like Ctrl-C, so the broker and data dir are always cleaned up.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    broker_cpus, load_cpus = cpu_split()
    os.sched_setaffinity(0, load_cpus)
    job = ProducerJob(
        TOPIC,
        args.records,
        args.record_size,
        args.compression,
        args.acks,
        args.linger_ms,
        args.batch_size,
    )
    try:
        with tempfile.TemporaryDirectory(prefix="odradek-bench-") as tmp, ExitStack() as stack:
            with pinned(broker_cpus):
                extra = dict(setting.split("=", 1) for setting in args.broker_set)
                broker = stack.enter_context(odradek_broker(Path(tmp), extra))
            client, pids = broker.client, broker.pids
            create_topic(client, TOPIC, args.partitions, 1, {})
            produced = run_phase("produce", produce, client, job, pids)
            stored = _stored_batches(broker.data_dirs[0])
            reader = ConsumerJob(TOPIC, job.records)
            consumed = run_phase("consume", consume, client, reader, pids)
    except BenchError as error:
        print(f"bench: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("bench: interrupted", file=sys.stderr)
        return 130
    print(
        f"\n{args.records:,} records of {args.record_size} bytes, {args.compression}, "
        f"linger.ms={args.linger_ms}, batch.size={args.batch_size}, "
        f"{args.partitions} partition(s), acks={args.acks}"
    )
    print(f"stored batches (sampled): {stored}")
    if not stored.startswith(f"{args.compression}:"):
        print(
            f"note: the producer did not send {args.compression} batches; librdkafka "
            "uses lz4 only if the broker advertises FindCoordinator, zstd only with "
            "Produce >= 7 and Fetch >= 10"
        )
    print(_line("produce", produced))
    print(_line("consume", consumed))
    return 0


def _line(name: str, result: PhaseResult) -> str:
    moved = result.moved
    return (
        f"{name:<8} {moved.records:>10,} records {moved.size / 1e6:>9,.1f} MB "
        f"{moved.seconds:>7.2f} s {moved.records / moved.seconds:>11,.0f} records/s "
        f"{moved.size / 1e6 / moved.seconds:>8,.1f} MB/s "
        f"{result.cpu_seconds / (moved.size / 1e9):>7.2f} broker CPU s/GB"
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000, help="(default: 1000000)")
    parser.add_argument("--record-size", type=int, default=1024, help="bytes (default: 1024)")
    parser.add_argument(
        "--batch-size",
        type=int,
        default=1_048_576,
        help="producer batch.size, 65536..1048576 (default: 1048576)",
    )
    parser.add_argument("--linger-ms", type=int, default=5, help="(default: 5)")
    parser.add_argument(
        "--compression", default="lz4", choices=["none", "gzip", "snappy", "lz4", "zstd"]
    )
    parser.add_argument("--acks", default="all", choices=["0", "1", "all"])
    parser.add_argument("--partitions", type=int, default=4, help="(default: 4)")
    parser.add_argument(
        "--broker-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra broker setting, passed as `odradek broker --set`; repeatable",
    )
    return parser


def _stored_batches(data_dir: Path) -> str:
    """Codec and average size of the batches the broker stored, sampled from the start
    of each partition's segments: librdkafka silently sends uncompressed batches when
    it thinks the broker lacks a codec, which would change what the numbers mean.
    """
    batches: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    records: Counter[str] = Counter()
    for segment in sorted(data_dir.glob(f"{TOPIC}-*/*.log")):
        with segment.open("rb") as file:
            sample = file.read(STORED_SAMPLE_BYTES)
        position = 0
        while len(sample) - position >= HEADER_SIZE:
            header = read_header(sample, position)
            codec = CODEC_NAMES.get(header.compression, str(header.compression))
            batches[codec] += 1
            sizes[codec] += header.size
            records[codec] += header.records_count
            position += header.size
    return "; ".join(
        f"{codec}: {count} batches, {sizes[codec] / count / 1024:.1f} KiB and "
        f"{records[codec] / count:.0f} records on average"
        for codec, count in batches.most_common()
    )


if __name__ == "__main__":
    sys.exit(main())
