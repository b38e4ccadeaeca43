"""Every partition log under one data directory, named ``<topic>-<partition>``."""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from pathlib import Path

from ..protocol.errors import KafkaError
from .log_cleaner import CleanerStats, LogCleaner
from .log_config import LogConfig
from .partition_log import PartitionLog

logger = logging.getLogger(__name__)

_PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")


def partition_dir_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def parse_partition_dir_name(name: str) -> tuple[str, int] | None:
    """(topic, partition) from ``<topic>-<partition>``; topics may contain '-' and '.'."""
    match = _PARTITION_DIR.match(name)
    if match is None:
        return None
    return match["topic"], int(match["partition"])


class LogManager:
    """Opens, creates, configures and deletes the partition logs of one broker."""

    def __init__(
        self,
        data_dir: Path,
        *,
        clock: Callable[[], float] = time.time,
        cleaner: LogCleaner | None = None,
    ) -> None:
        self.data_dir = data_dir
        self._clock = clock
        self._logs: dict[tuple[str, int], PartitionLog] = {}
        self.cleaner = cleaner or LogCleaner()
        self.cleaner_stats = CleanerStats()  # since start, for metrics

    def load(self, config_for: Callable[[str], LogConfig] = lambda topic: LogConfig()) -> None:
        """Open every partition directory under the data directory.

        ``config_for`` gives a topic's config; by default Kafka's defaults,
        until ``update_config`` applies the topic's own.
        """
        self.data_dir.mkdir(parents=True, exist_ok=True)
        for path in sorted(self.data_dir.iterdir()):
            parsed = parse_partition_dir_name(path.name) if path.is_dir() else None
            if parsed is None or parsed in self._logs:
                continue
            topic, _ = parsed
            self._logs[parsed] = PartitionLog.open(path, config_for(topic), clock=self._clock)
        logger.info("loaded %d partition logs from %s", len(self._logs), self.data_dir)

    def get(self, topic: str, partition: int) -> PartitionLog | None:
        return self._logs.get((topic, partition))

    def get_or_create(self, topic: str, partition: int, config: LogConfig) -> PartitionLog:
        """The partition's log, opened if needed, under the topic's ``config`` (a log loaded
        at start-up had only the defaults)."""
        log = self._logs.get((topic, partition))
        if log is None:
            directory = self.data_dir / partition_dir_name(topic, partition)
            log = PartitionLog.open(directory, config, clock=self._clock)
            self._logs[(topic, partition)] = log
        log.config = config
        return log

    def delete(self, topic: str, partition: int) -> None:
        """Remove the partition's log and its files (nothing happens if there is none)."""
        log = self._logs.pop((topic, partition), None)
        if log is not None:
            log.delete()

    def partitions(self) -> Iterable[tuple[str, int, PartitionLog]]:
        return [(topic, partition, log) for (topic, partition), log in self._logs.items()]

    def update_config(self, topic: str, config: LogConfig) -> None:
        """Apply ``config`` to every partition of ``topic``; it takes effect on the next append."""
        for (log_topic, _), log in self._logs.items():
            if log_topic == topic:
                log.config = config

    def enforce_retention(self, now_ms: int | None = None) -> int:
        """Delete segments past retention in every log; the bytes deleted."""
        now_ms = self._now_ms() if now_ms is None else now_ms
        return sum(log.delete_retention_segments(now_ms) for log in self._logs.values())

    async def clean_once(self, executor: Executor | None = None) -> CleanerStats:
        """Clean every compacted log that is dirty enough, one at a time.

        Call on the event loop that uses the logs: planning and swapping run
        here, the reading and writing in ``executor`` (the loop's default if None).
        """
        loop = asyncio.get_running_loop()
        total = CleanerStats()
        for (topic, partition), log in list(self._logs.items()):
            plan = self.cleaner.plan(log, self._now_ms())
            if plan is None:
                continue
            try:
                cleaned = await loop.run_in_executor(executor, self.cleaner.write, plan)
            except (OSError, KafkaError) as error:
                # e.g. retention deleted a planned segment meanwhile; the next pass retries
                logger.warning("cleaning %s-%d failed: %s", topic, partition, error)
                self.cleaner.discard(log)
                continue
            total += self.cleaner.swap(log, cleaned)
        self.cleaner_stats += total
        return total

    def flush_all(self) -> None:
        for log in self._logs.values():
            log.flush()

    def checkpoint_all(self) -> None:
        """Checkpoint every log; may run on a thread while the event loop adds or removes logs."""
        for log in list(self._logs.values()):
            log.checkpoint()

    def close_all(self) -> None:
        for log in self._logs.values():
            log.close()
        self._logs.clear()

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)
