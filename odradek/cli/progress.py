"""Throughput reporting for long-running client commands and benchmarks."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable

MIB = 1024 * 1024


def format_throughput(records: int, size: int, seconds: float) -> str:
    """'N records (X MiB) in T s: R records/s, B MiB/s'."""
    seconds = max(seconds, 1e-9)
    return (
        f"{records} records ({size / MIB:.1f} MiB) in {seconds:.1f} s: "
        f"{records / seconds:,.0f} records/s, {size / MIB / seconds:.1f} MiB/s"
    )


class Progress:
    """Counts records and bytes; past each ``interval`` prints a status line on stderr.

    Runs shorter than one interval print nothing, so quick commands stay quiet.
    """

    def __init__(
        self,
        verb: str,
        *,
        total: int | None = None,
        interval: float = 2.0,
        enabled: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.verb = verb
        self.total = total
        self.records = 0
        self.size = 0
        self._interval = interval
        self._enabled = enabled
        self._clock = clock
        self._start = clock()
        self._next_report = self._start + interval

    @property
    def elapsed(self) -> float:
        return self._clock() - self._start

    def add(self, records: int, size: int) -> None:
        """Count ``records`` more records of ``size`` bytes in all; report if due."""
        self.records += records
        self.size += size
        if self._enabled and (now := self._clock()) >= self._next_report:
            self._next_report = now + self._interval
            print(self.line(), file=sys.stderr, flush=True)

    def summary(self) -> str:
        """Records, size, time and rates so far."""
        return format_throughput(self.records, self.size, self.elapsed)

    def line(self) -> str:
        """The status so far: 'produced 5000 records (4.9 MiB) in 2.0 s: ...; 50% of 10000'."""
        text = f"{self.verb} {self.summary()}"
        if self.total:
            text += f"; {100 * self.records // self.total}% of {self.total}"
        return text
