"""What a broker process costs, read from /proc, and CPU pinning of the processes we start."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

CLOCK_TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of ``pid`` (all its threads), from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    utime, stime = int(fields[11]), int(fields[12])  # fields 14 and 15 of stat(5)
    return (utime + stime) / CLOCK_TICKS_PER_S


def total_cpu_seconds(pids: Iterable[int]) -> float:
    return sum(cpu_seconds(pid) for pid in pids)


def peak_rss_bytes(pid: int) -> int:
    """The process's peak resident set size so far (VmHWM)."""
    return _status_kib(pid, "VmHWM:") * 1024


def _status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field):
            return int(line.split()[1])
    raise ValueError(f"no {field} in /proc/{pid}/status")


def rss_bytes(pid: int) -> int:
    """The process's resident set size now (VmRSS)."""
    return _status_kib(pid, "VmRSS:") * 1024


def open_descriptors(pid: int) -> int:
    """How many file descriptors the process holds open."""
    return len(os.listdir(f"/proc/{pid}/fd"))


def cpu_split() -> tuple[set[int], set[int]]:
    """(broker CPUs, load generator CPUs): the first CPU we may use, and the rest."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        return set(cpus), set(cpus)
    return {cpus[0]}, set(cpus[1:])


@contextmanager
def pinned(cpus: set[int]) -> Iterator[None]:
    """Run the block on ``cpus``: processes started inside inherit them; restored after."""
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)
