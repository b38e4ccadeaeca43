"""Where one `odradek broker` spends its time while producing and consuming: py-spy samples.

Starts a broker like compare.py does, attaches ``py-spy record`` to it for each
phase of a workload, and writes per phase a flame graph (SVG) and the functions
with the most samples, by own time and by time including callees. See
bench/README.md.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

from load_workers import ConsumerJob, ProducerJob, consume, produce, run_phase
from odradek_system import odradek_broker
from proc_stats import cpu_split, pinned
from running_system import create_topic
from secured_listener import PROTOCOLS, listener_security
from workloads import HEADLINE, MIB

TOPIC = "bench"
TOP = 25


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=int, default=256, help="MiB to produce (default 256)")
    parser.add_argument("--output", type=Path, default=Path(__file__).parent / "results")
    parser.add_argument(
        "--security",
        default="PLAINTEXT",
        type=str.upper,
        choices=PROTOCOLS,
        help="the clients' listener (default PLAINTEXT)",
    )
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    workload = HEADLINE
    records = args.size_mb * MIB // workload.record_size
    job = ProducerJob(
        TOPIC,
        records,
        workload.record_size,
        workload.compression,
        workload.acks,
        workload.linger_ms,
        workload.batch_size,
    )
    broker_cpus, load_cpus = cpu_split()
    os.sched_setaffinity(0, load_cpus)
    with tempfile.TemporaryDirectory(prefix="bench-profile-") as tmp, ExitStack() as stack:
        with pinned(broker_cpus):
            security = listener_security(args.security, Path(tmp) / "security")
            running = stack.enter_context(odradek_broker(Path(tmp), security=security))
        client, pids = running.client, running.pids
        create_topic(client, TOPIC, workload.partitions, 1, {})
        _profiled(
            args.output / "produce",
            pids[0],
            lambda: run_phase("produce", produce, client, job, pids),
        )
        _profiled(
            args.output / "consume",
            pids[0],
            lambda: run_phase("consume", consume, client, ConsumerJob(TOPIC, records), pids),
        )
    return 0


def _profiled(prefix: Path, pid: int, phase: Callable[[], object]) -> None:
    """Run ``phase`` under ``py-spy record`` of ``pid``; write <prefix>.svg and <prefix>.txt."""
    prefix.parent.mkdir(parents=True, exist_ok=True)
    raw = prefix.with_suffix(".raw")
    command = ["py-spy", "record", "--pid", str(pid), "--rate", "200", "--nonblocking"]
    spies = [
        subprocess.Popen(
            [*command, "--format", fmt, "--output", str(path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for fmt, path in (("raw", raw), ("flamegraph", prefix.with_suffix(".svg")))
    ]
    try:
        result = phase()
    finally:
        for spy in spies:
            spy.send_signal(signal.SIGINT)
            spy.wait(60)
    report = f"{prefix.name}: {result}\n\n{_top_functions(raw)}"
    prefix.with_suffix(".txt").write_text(report)
    print(report)


def _top_functions(raw: Path) -> str:
    """The functions with the most samples, as own time and as inclusive time."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        count = int(count_text)
        frames = stack.split(";")
        total += count
        own[frames[-1]] += count
        for frame in set(frames):
            inclusive[frame] += count

    def table(counter: Counter[str]) -> str:
        return "\n".join(
            f"{100 * n / total:5.1f}%  {frame}" for frame, n in counter.most_common(TOP)
        )

    return f"own time:\n{table(own)}\n\ninclusive:\n{table(inclusive)}\n"


if __name__ == "__main__":
    sys.exit(main())
