"""The broker's periodic log work: checkpoints, retention and compaction."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterator

from prometheus_client.core import CounterMetricFamily
from prometheus_client.registry import Collector

from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.log.log_manager import LogManager

log = logging.getLogger(__name__)

RECHECK_INTERVAL_S = 1.0


class LogMaintenance:
    def __init__(self, logs: LogManager, config: Callable[[], BrokerConfig]) -> None:
        self._logs = logs
        self._config = config
        self._tasks: list[asyncio.Task[None]] = []

    def start(self) -> None:
        config = self._config()
        checkpoint_s = config.get_int("replica.high.watermark.checkpoint.interval.ms") / 1000
        retention_s = config.get_int("log.retention.check.interval.ms") / 1000
        self._tasks = [
            asyncio.create_task(
                self._every(lambda: checkpoint_s, self._checkpoint), name="checkpoints"
            ),
            asyncio.create_task(
                self._every(lambda: retention_s, self._retention), name="retention"
            ),
        ]
        if config.get_bool("log.cleaner.enable"):
            # a dynamic config, as in Kafka: read again during every pause
            backoff_s = lambda: self._config().get_int("log.cleaner.backoff.ms") / 1000  # noqa: E731
            self._tasks.append(
                asyncio.create_task(self._every(backoff_s, self._clean), name="log-cleaner")
            )

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _every(
        self, interval_s: Callable[[], float], work: Callable[[], Awaitable[None]]
    ) -> None:
        while True:
            await _pause(interval_s)
            try:
                await work()
            except Exception:
                log.exception("periodic log work failed; trying again next time")

    async def _checkpoint(self) -> None:
        # Each checkpoint is a write and two fsyncs; on a busy disk they would stall
        # every connection, so they run off the event loop (Kafka: a scheduler thread).
        await asyncio.to_thread(self._logs.checkpoint_all)

    async def _retention(self) -> None:
        deleted = self._logs.enforce_retention()
        if deleted:
            log.info("retention deleted %d bytes of old segments", deleted)

    async def _clean(self) -> None:
        await self._logs.clean_once()


async def _pause(interval_s: Callable[[], float]) -> None:
    """Sleep ``interval_s()`` seconds, reading it again at least every second: a dynamic
    config changed meanwhile (say a long log.cleaner.backoff.ms made short) applies within
    a second, as Kafka's reconfigured cleaner restarts at once."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    while (remaining := started + interval_s() - loop.time()) > 0:
        await asyncio.sleep(min(remaining, RECHECK_INTERVAL_S))


class CleanerCollector(Collector):
    """The log cleaner's running totals."""

    def __init__(self, logs: LogManager) -> None:
        self._logs = logs

    def collect(self) -> Iterator[CounterMetricFamily]:
        stats = self._logs.cleaner_stats
        for name, documentation, value in (
            ("odradek_log_cleaner_runs", "Logs compacted by the cleaner", stats.runs),
            ("odradek_log_cleaner_bytes_reclaimed", "Bytes freed by compaction",
             stats.bytes_reclaimed),
            ("odradek_log_cleaner_records_removed", "Records removed by compaction",
             stats.records_removed),
        ):  # fmt: skip
            counter = CounterMetricFamily(name, documentation)
            counter.add_metric([], value)
            yield counter
