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
import multiprocessing
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from typing import Any

from confluent_kafka import OFFSET_BEGINNING, Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]

from odradek.broker.protocol.compression import CODEC_NAMES
from odradek.broker.protocol.records import HEADER_SIZE, read_header
from odradek.cli.produce_command import send_records, synthetic_records
from odradek.cli.progress import Progress

TOPIC = "bench"
READY_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 15.0
PHASE_TIMEOUT_S = 3600.0
STORED_SAMPLE_BYTES = 64 * 1024 * 1024
CLOCK_TICKS_PER_S = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class PhaseResult:
    """What one phase moved, how long it took and the broker CPU it cost."""

    name: str
    records: int
    size: int
    seconds: float
    broker_cpu_seconds: float

    def line(self) -> str:
        gigabytes = self.size / 1e9
        return (
            f"{self.name:<8} {self.records:>10,} records {self.size / 1e6:>9,.1f} MB "
            f"{self.seconds:>7.2f} s {self.records / self.seconds:>11,.0f} records/s "
            f"{self.size / 1e6 / self.seconds:>8,.1f} MB/s "
            f"{self.broker_cpu_seconds / gigabytes:>7.2f} broker CPU s/GB"
        )


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    # SIGTERM unwinds like Ctrl-C, so the broker and data dir are always cleaned up.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        with _running_broker(args) as broker:
            _create_topic(broker.bootstrap, args.partitions)
            results = [_run_phase("produce", _produce, broker, args)]
            stored = _stored_batches(broker.data_dir)
            results.append(_run_phase("consume", _consume, broker, args))
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
    for result in results:
        print(result.line())
    return 0


class BenchError(Exception):
    """A failure to report in one sentence."""


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


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass(frozen=True)
class RunningBroker:
    bootstrap: str
    pid: int
    data_dir: Path


@contextmanager
def _running_broker(args: argparse.Namespace) -> Iterator[RunningBroker]:
    """Yield a ready broker; stop it and delete its dir on exit."""
    workdir = Path(tempfile.mkdtemp(prefix="odradek-bench-"))
    port, http_port = _free_port(), _free_port()
    data_dir = workdir / "data"
    settings = [
        f"listeners=PLAINTEXT://127.0.0.1:{port}",
        f"log.dirs={data_dir}",
        f"http.listener=127.0.0.1:{http_port}",
        *args.broker_set,
    ]
    command = [sys.executable, "-c", "from odradek.cli.main import main; main()", "broker"]
    for setting in settings:
        command += ["--set", setting]
    log_path = workdir / "broker.log"
    process: subprocess.Popen[bytes] | None = None
    try:
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        print(f"bench: starting broker (pid {process.pid}) on 127.0.0.1:{port}", file=sys.stderr)
        _wait_ready(process, f"http://127.0.0.1:{http_port}/readyz", log_path)
        yield RunningBroker(f"127.0.0.1:{port}", process.pid, data_dir)
    finally:
        if process is not None:
            _stop(process)
        shutil.rmtree(workdir, ignore_errors=True)


def _wait_ready(process: subprocess.Popen[bytes], url: str, log_path: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise BenchError(
                f"the broker exited with code {process.returncode}:\n{_tail(log_path)}"
            )
        try:
            with urllib.request.urlopen(url, timeout=1.0) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.1)
    raise BenchError(f"the broker was not ready within {READY_TIMEOUT_S:g} s:\n{_tail(log_path)}")


def _tail(log_path: Path, lines: int = 30) -> str:
    return "\n".join(log_path.read_text(errors="replace").splitlines()[-lines:])


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL the broker's process group if it does not stop in time."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    print("bench: broker stopped", file=sys.stderr)


def _create_topic(bootstrap: str, partitions: int) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    future = admin.create_topics([NewTopic(TOPIC, num_partitions=partitions)])[TOPIC]
    future.result(timeout=30)


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


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` (all its threads), from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of stat(5)
    return (utime + stime) / CLOCK_TICKS_PER_S


Worker = Callable[[Connection, str, argparse.Namespace], None]


def _run_phase(
    name: str, worker: Worker, broker: RunningBroker, args: argparse.Namespace
) -> PhaseResult:
    """Run ``worker`` in its own process; sample broker CPU between its 'ready' and 'done'.

    The worker connects first and waits for a go, so client start-up is not measured.
    """
    parent_end, worker_end = multiprocessing.Pipe()
    process = multiprocessing.get_context("spawn").Process(
        target=_worker_main, args=(worker, worker_end, broker.bootstrap, args), name=f"bench-{name}"
    )
    process.start()
    try:
        _expect(parent_end, process, "ready")
        cpu_before = _cpu_seconds(broker.pid)
        print(f"bench: {name} phase started", file=sys.stderr)
        parent_end.send("go")
        records, size, seconds = _expect(parent_end, process, "done")
        cpu_after = _cpu_seconds(broker.pid)
    finally:
        if process.is_alive():
            process.kill()
        process.join()
    return PhaseResult(name, records, size, seconds, cpu_after - cpu_before)


def _worker_main(
    worker: Worker, connection: Connection, bootstrap: str, args: argparse.Namespace
) -> None:
    """Entry of a worker process: Ctrl-C is the parent's to handle, errors go back as text."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        worker(connection, bootstrap, args)
    except Exception as error:
        connection.send(("error", f"{type(error).__name__}: {error}"))


def _expect(connection: Connection, process: BaseProcess, tag: str) -> Any:
    """Wait for ``(tag, payload)`` from the worker; a dead worker or an error is a BenchError."""
    deadline = time.monotonic() + PHASE_TIMEOUT_S
    while not connection.poll(1.0):
        if not process.is_alive():
            raise BenchError(f"the {process.name} process died (exit code {process.exitcode})")
        if time.monotonic() > deadline:
            raise BenchError(f"the {process.name} process took over {PHASE_TIMEOUT_S:g} s")
    received_tag, payload = connection.recv()
    if received_tag == "error":
        raise BenchError(f"{process.name}: {payload}")
    assert received_tag == tag, (received_tag, tag)
    return payload


def _produce(connection: Connection, bootstrap: str, args: argparse.Namespace) -> None:
    """Worker: send ``--records`` synthetic records, flush, report (records, bytes, seconds)."""
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "compression.type": args.compression,
            "linger.ms": args.linger_ms,
            "batch.size": args.batch_size,
            "acks": args.acks,
            "queue.buffering.max.kbytes": 1_048_576,
        }
    )
    producer.list_topics(TOPIC, timeout=30)
    failures: list[str] = []

    def delivered(error: Any, message: Any) -> None:
        if error is None:
            progress.add(1, len(message))
        else:
            failures.append(str(error))

    connection.send(("ready", None))
    connection.recv()
    progress = Progress("produced", total=args.records)
    start = time.monotonic()
    send_records(
        producer, TOPIC, synthetic_records(args.records, args.record_size), on_delivery=delivered
    )
    producer.flush()
    seconds = time.monotonic() - start
    if failures:
        connection.send(("error", f"{len(failures)} records failed, first: {failures[0]}"))
    else:
        connection.send(("done", (progress.records, progress.size, seconds)))


def _consume(connection: Connection, bootstrap: str, args: argparse.Namespace) -> None:
    """Worker: read every partition from the beginning until ``--records`` records arrived."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "odradek-bench",  # required by librdkafka; partitions are assigned
            "enable.auto.commit": False,
            "fetch.max.bytes": 64 * 1024 * 1024,
            "max.partition.fetch.bytes": 16 * 1024 * 1024,
        }
    )
    metadata = consumer.list_topics(TOPIC, timeout=30)
    partitions = sorted(metadata.topics[TOPIC].partitions)
    connection.send(("ready", None))
    connection.recv()
    progress = Progress("consumed", total=args.records)
    start = time.monotonic()
    consumer.assign([TopicPartition(TOPIC, number, OFFSET_BEGINNING) for number in partitions])
    while progress.records < args.records:
        for message in consumer.consume(10_000, 1.0):
            error = message.error()
            if error is not None:
                connection.send(("error", str(error)))
                return
            progress.add(1, len(message))
    seconds = time.monotonic() - start
    consumer.close()
    connection.send(("done", (progress.records, progress.size, seconds)))


if __name__ == "__main__":
    sys.exit(main())
