"""A Go load generator (franz-go, bench/loadgen) as phases: no per-record interpreter work.

compare.py's Python clients (confluent-kafka) cap most throughput phases before
either broker does; ``--clients go`` runs the same produce and consume phases
with bench/loadgen instead, sending the same records (cut from the same text
pool as the Python producer's), so that the broker sets the pace. The binary is
built once with the Go toolchain from the module proxy, cached by its sources'
hash in ~/.cache/odradek/bin.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path

from kafka_dist import CACHE
from load_workers import PHASE_TIMEOUT_S, BenchError, ConsumerJob, Moved, PhaseResult, ProducerJob
from proc_stats import total_cpu_seconds
from running_system import RunningSystem

from odradek.cli.produce_command import synthetic_pool

SOURCES = Path(__file__).resolve().parent / "loadgen"
CODECS = ("none", "lz4")


def loadgen_binary() -> Path:
    """The load generator built from bench/loadgen, building it (at nice 19) if absent."""
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum", "main.go"):
        digest.update((SOURCES / name).read_bytes())
    binary = CACHE / "bin" / f"loadgen-{digest.hexdigest()[:12]}"
    if binary.is_file():
        return binary
    binary.parent.mkdir(parents=True, exist_ok=True)
    with open(f"{binary}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build, even with concurrent callers
        if not binary.is_file():
            if shutil.which("go") is None:
                raise BenchError("building the Go load generator needs Go's toolchain on PATH")
            print(f"bench: building the Go load generator into {binary}", file=sys.stderr)
            go = CACHE / "go"
            environment = {
                **os.environ,
                "GOPATH": str(go),
                "GOMODCACHE": str(go / "pkg" / "mod"),
                "GOCACHE": str(go / "build-cache"),
                "GOFLAGS": "-modcacherw -buildvcs=false",
                "GOTOOLCHAIN": "local",
            }
            command = ["nice", "-n", "19", "go", "build", "-o", f"{binary}.tmp", "."]
            subprocess.run(command, cwd=SOURCES, env=environment, check=True)
            os.replace(f"{binary}.tmp", binary)
    return binary


def write_pool(path: Path, job: ProducerJob) -> Path:
    """The text the Python producer cuts ``job``'s records from, for the Go producer."""
    path.write_bytes(synthetic_pool(job.records, job.record_size))
    return path


def go_produce(running: RunningSystem, job: ProducerJob, pool: Path) -> PhaseResult:
    """The load generator sends ``job.records`` records as fast as the broker takes them."""
    if job.compression not in CODECS:
        raise BenchError(f"the Go load generator compresses with {CODECS}, not {job.compression}")
    arguments = ["produce", "-topic", job.topic, "-records", str(job.records)]
    arguments += ["-size", str(job.record_size), "-pool", str(pool)]
    arguments += ["-compression", job.compression, "-acks", job.acks]
    arguments += ["-linger-ms", str(job.linger_ms), "-batch-bytes", str(job.batch_size)]
    return _run(running, arguments)


def go_consume(running: RunningSystem, job: ConsumerJob) -> PhaseResult:
    """The load generator reads every partition from its start until ``job.records`` came."""
    return _run(running, ["consume", "-topic", job.topic, "-records", str(job.records)])


def _run(running: RunningSystem, arguments: list[str]) -> PhaseResult:
    """Run the load generator, sampling the brokers' CPU between its go-ahead and result."""
    command = [str(loadgen_binary()), arguments[0], "-brokers", running.bootstrap, *arguments[1:]]
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as process:
        assert process.stdin is not None and process.stdout is not None
        try:
            deadline = time.monotonic() + PHASE_TIMEOUT_S
            if _line(process, deadline) != "ready":
                raise BenchError(f"the Go load generator did not start: {arguments[0]}")
            before = total_cpu_seconds(running.pids)
            process.stdin.write("go\n")
            process.stdin.flush()
            answer = _line(process, deadline)
            cpu_seconds = total_cpu_seconds(running.pids) - before
        finally:
            process.kill()
    moved = json.loads(answer)
    return PhaseResult(
        Moved(
            moved["records"],
            moved["bytes"],
            moved["seconds"],
            client_cpu_seconds=moved["cpu_seconds"],
        ),
        cpu_seconds,
    )


def _line(process: subprocess.Popen[str], deadline: float) -> str:
    """The next line the load generator prints; its failure or a timeout is a BenchError."""
    assert process.stdout is not None
    while not select.select([process.stdout], [], [], 1.0)[0]:
        if process.poll() is not None:
            break
        if time.monotonic() > deadline:
            raise BenchError(f"the Go load generator took over {PHASE_TIMEOUT_S:g} s")
    line = process.stdout.readline().strip()
    if not line:
        process.wait()
        raise BenchError(f"the Go load generator exited with {process.returncode} (see above)")
    return line
