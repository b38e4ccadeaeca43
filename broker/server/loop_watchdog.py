"""Notices when the broker's event loop stops turning, and says where it is stuck.

While the loop stalls the broker answers no request and refreshes no etcd session: a
stall as long as ``broker.session.timeout.ms`` less a heartbeat can cost it its session.
The loop beats every quarter of the threshold; a thread watches the beat and, once it is
a whole threshold late, logs the loop thread's stack (where it is stuck); the next beat
logs how long the stall lasted. A paused process (SIGSTOP) shows as a stall too, as it
is one.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
import traceback
from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

log = logging.getLogger(__name__)

STALL_THRESHOLD_S = 1.0


class LoopWatchdog:
    def __init__(self, threshold_s: float = STALL_THRESHOLD_S) -> None:
        self.threshold_s = threshold_s
        self.stalls = 0  # stalls of at least the threshold, ended
        self.stalled_s = 0.0  # their total length
        self._beat = 0.0  # monotonic time of the loop's last beat
        self._stack_logged = False  # for the stall going on
        self._loop_thread = 0
        self._timer: asyncio.TimerHandle | None = None
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="loop-watchdog", daemon=True)

    @property
    def _period_s(self) -> float:
        return self.threshold_s / 4

    def start(self) -> None:
        """Watch the running loop."""
        self._loop_thread = threading.get_ident()
        self._beat = time.monotonic()
        self._timer = asyncio.get_running_loop().call_later(self._period_s, self._on_beat)
        self._thread.start()

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join()

    def _late_s(self, now: float) -> float:
        return now - self._beat - self._period_s

    def _on_beat(self) -> None:
        now = time.monotonic()
        late = self._late_s(now)
        if late >= self.threshold_s:
            self.stalls += 1
            self.stalled_s += late
            log.warning(
                "event loop stalled for %.1f s: no request was answered and no etcd session "
                "refreshed meanwhile",
                late,
            )
        self._stack_logged = False
        self._beat = now
        self._timer = asyncio.get_running_loop().call_later(self._period_s, self._on_beat)

    def _watch(self) -> None:
        while not self._stopped.wait(self._period_s):
            late = self._late_s(time.monotonic())
            if late < self.threshold_s or self._stack_logged:
                continue
            self._stack_logged = True
            frame = sys._current_frames().get(self._loop_thread)
            stack = "".join(traceback.format_stack(frame)) if frame is not None else "?\n"
            log.warning("event loop stalled for %.1f s so far, in:\n%s", late, stack.rstrip())


class LoopStallCollector(Collector):
    """The watchdog's running totals."""

    def __init__(self, watchdog: LoopWatchdog) -> None:
        self._watchdog = watchdog

    def collect(self) -> Iterator[CounterMetricFamily]:
        for name, documentation, value in (
            ("odradek_event_loop_stalls", "Event loop stalls of a second or more",
             self._watchdog.stalls),
            ("odradek_event_loop_stalled_seconds", "Time the event loop spent in them",
             self._watchdog.stalled_s),
        ):  # fmt: skip
            counter = CounterMetricFamily(name, documentation)
            counter.add_metric([], value)
            yield counter
