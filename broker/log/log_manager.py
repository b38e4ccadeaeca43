"""Every partition log of one broker, spread over its log directories (``log.dirs``, JBOD).

A replica lives in ``<log dir>/<topic>-<partition>``. While it moves to another log
directory (AlterReplicaLogDirs) its copy grows in ``<other dir>/<topic>-<partition>.<id>-future``;
when the copy has caught up, the current directory is renamed ``...<id>-delete`` and the
future one takes the plain name, as Kafka names them. A crash between the two renames
leaves a future log with no current one: it was complete, so loading promotes it.
"""

from __future__ import annotations

import asyncio
import logging
import re
import shutil
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor
from pathlib import Path

from ..protocol.errors import ErrorCode, KafkaError
from .file_io import fsync_directory
from .log_cleaner import CleanerStats, LogCleaner
from .log_config import LogConfig
from .log_dir_failures import LogDirFailures
from .partition_log import PartitionLog

logger = logging.getLogger(__name__)

_PARTITION_DIR = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)$")
_MOVING_DIR = re.compile(
    r"^(?P<topic>.+)-(?P<partition>\d+)\.(?P<id>[0-9a-f]{32})-(?P<kind>future|delete)$"
)
FUTURE_SUFFIX = "-future"
DELETE_SUFFIX = "-delete"
Key = tuple[str, int]


def partition_dir_name(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def parse_partition_dir_name(name: str) -> tuple[str, int] | None:
    """(topic, partition) from ``<topic>-<partition>``; topics may contain '-' and '.'."""
    match = _PARTITION_DIR.match(name)
    if match is None:
        return None
    return match["topic"], int(match["partition"])


class LogManager:
    """Opens, creates, places, moves, configures and deletes the partition logs of one broker."""

    def __init__(
        self,
        *log_dirs: Path,
        clock: Callable[[], float] = time.time,
        cleaner: LogCleaner | None = None,
    ) -> None:
        if not log_dirs:
            raise ValueError("at least one log directory")
        self.log_dirs = tuple(path.expanduser().absolute() for path in log_dirs)
        self._clock = clock
        self._logs: dict[Key, PartitionLog] = {}
        self._futures: dict[Key, PartitionLog] = {}
        self._preferred: dict[Key, Path] = {}
        self.cleaner = cleaner or LogCleaner()
        self.cleaner_stats = CleanerStats()  # since start, for metrics
        self.failures = LogDirFailures()

    def load(self, config_for: Callable[[str], LogConfig] = lambda topic: LogConfig()) -> None:
        """Open every partition directory under the online log directories, finishing any
        move a crash interrupted.

        A directory that fails to load (an ``OSError``) goes offline with none of its logs
        open, and the others load, as Kafka starts without it. ``config_for`` gives a
        topic's config; by default Kafka's defaults, until ``update_config`` applies the
        topic's own.
        """
        futures: dict[Key, Path] = {}
        for log_dir in self.online_log_dirs:
            try:
                futures.update(self._load_dir(log_dir, config_for))
            except OSError as error:
                self._take_offline_at_start(log_dir, error)
        for key, path in futures.items():
            if self.failures.is_offline(path.parent):
                continue
            try:
                self._open_future(key, path, config_for)
            except OSError as error:
                self._take_offline_at_start(path.parent, error)
        logger.info(
            "loaded %d partition logs (%d moving) from %s",
            len(self._logs),
            len(self._futures),
            ", ".join(map(str, self.online_log_dirs)),
        )

    def _load_dir(self, log_dir: Path, config_for: Callable[[str], LogConfig]) -> dict[Key, Path]:
        """Open the current logs in ``log_dir``; the copies moving into it, by partition."""
        futures: dict[Key, Path] = {}
        log_dir.mkdir(parents=True, exist_ok=True)
        for path in sorted(log_dir.iterdir()):
            if not path.is_dir():
                continue
            moving = _MOVING_DIR.match(path.name)
            if moving is not None and moving["kind"] == "delete":
                shutil.rmtree(path)  # a replaced copy whose deletion a stop cut short
            elif moving is not None:
                futures[(moving["topic"], int(moving["partition"]))] = path
            elif (parsed := parse_partition_dir_name(path.name)) is not None:
                self._open_current(parsed, path, config_for)
        return futures

    def _open_future(self, key: Key, path: Path, config_for: Callable[[str], LogConfig]) -> None:
        if key in self._logs:
            self._futures[key] = PartitionLog.open(
                path, config_for(key[0]), clock=self._clock, failures=self.failures
            )
        elif not self.failures.offline:  # stopped between the two renames of a swap
            promoted = path.with_name(partition_dir_name(*key))
            path.rename(promoted)
            fsync_directory(promoted.parent)
            self._open_current(key, promoted, config_for)
        # else the current log may be in an offline directory: the copy waits for it

    def _take_offline_at_start(self, log_dir: Path, error: OSError) -> None:
        """``log_dir`` offline, and the logs opened from it before ``error`` closed."""
        self.failures.fail(log_dir, "loading its logs", error)
        for logs in (self._logs, self._futures):
            for key in [k for k, log in logs.items() if log.directory.parent == log_dir]:
                logs.pop(key).close()

    def _open_current(self, key: Key, path: Path, config_for: Callable[[str], LogConfig]) -> None:
        if key in self._logs:
            raise RuntimeError(
                f"{partition_dir_name(*key)} is in two log directories: "
                f"{self._logs[key].directory.parent} and {path.parent}"
            )
        self._logs[key] = PartitionLog.open(
            path, config_for(key[0]), clock=self._clock, failures=self.failures
        )

    def get(self, topic: str, partition: int) -> PartitionLog | None:
        return self._logs.get((topic, partition))

    def get_or_create(
        self, topic: str, partition: int, config: LogConfig, *, new: bool = True
    ) -> PartitionLog:
        """The partition's log, opened if needed, under the topic's ``config`` (a log loaded
        at start-up had only the defaults). A new log goes to the directory asked for it
        (AlterReplicaLogDirs before the replica existed), else to the one holding fewest
        partitions, as Kafka places them.

        A replica that is not ``new`` (assigned here before the broker started) gets no
        empty log while a log directory is offline, as in Kafka: its log may be in that
        directory (KAFKA_STORAGE_ERROR).
        """
        key = (topic, partition)
        log = self._logs.get(key)
        if log is None and not new and self.failures.offline:
            offline = ", ".join(map(str, self.failures.offline))
            raise KafkaError(
                ErrorCode.kafka_storage_error,
                f"{topic}-{partition}: its log may be in an offline log directory ({offline})",
            )
        if log is None:
            [directory] = self.place([key])
            log = self.open_new(directory, config)
            self._logs[key] = log
        log.config = config
        return log

    def place(self, keys: Sequence[Key]) -> list[Path]:
        """Where the new logs of ``keys`` go: the directory asked for each (AlterReplicaLogDirs
        before the replica existed), else the online one holding fewest partitions, counting
        those placed before it (KAFKA_STORAGE_ERROR if every directory is offline)."""
        online = self.online_log_dirs
        if not online:
            raise KafkaError(ErrorCode.kafka_storage_error, "every log directory is offline")
        counts = dict.fromkeys(online, 0)
        if len(online) > 1:  # else without counting: creating n partitions would cost n**2
            for log in self._logs.values():
                counts[log.directory.parent] = counts.get(log.directory.parent, 0) + 1
        placed = []
        for key in keys:
            log_dir = self._preferred.pop(key, None) or min(online, key=lambda d: counts[d])
            counts[log_dir] = counts.get(log_dir, 0) + 1
            placed.append(log_dir / partition_dir_name(*key))
        return placed

    def open_new(self, directory: Path, config: LogConfig, leader_epoch: int = -1) -> PartitionLog:
        """Create the log ``place`` put in ``directory``, leading from ``leader_epoch`` (if
        not -1), without adding it to this manager (``adopt`` does): safe on any thread.
        An I/O error takes the log directory offline (KAFKA_STORAGE_ERROR)."""
        try:
            log = PartitionLog.open(directory, config, clock=self._clock, failures=self.failures)
            if leader_epoch >= 0:
                log.start_leader_epoch(leader_epoch)
        except OSError as error:
            raise self.failures.fail(
                directory.parent, f"creating {directory.name}", error
            ) from None
        return log

    def adopt(self, topic: str, partition: int, log: PartitionLog, config: LogConfig) -> None:
        """Serve ``log``, made by ``open_new``, as the partition's, under ``config``."""
        log.config = config
        self._logs[(topic, partition)] = log

    @property
    def online_log_dirs(self) -> tuple[Path, ...]:
        """The log directories no I/O error has taken offline."""
        return tuple(d for d in self.log_dirs if not self.failures.is_offline(d))

    def log_dir_of(self, topic: str, partition: int) -> Path | None:
        """The log directory holding the partition's current log."""
        log = self._logs.get((topic, partition))
        return None if log is None else log.directory.parent

    def known_log_dir(self, path: str) -> Path:
        """``path`` as one of the log directories; LOG_DIR_NOT_FOUND if it is none of them."""
        candidate = Path(path).expanduser().absolute()
        if candidate not in self.log_dirs:
            raise KafkaError(ErrorCode.log_dir_not_found, f"{path} is not one of log.dirs")
        return candidate

    def prefer_log_dir(self, topic: str, partition: int, log_dir: Path) -> None:
        """Create the partition's log in ``log_dir`` when it comes to this broker."""
        self._preferred[(topic, partition)] = log_dir

    # --- moves between log directories ------------------------------------------------------

    def future(self, topic: str, partition: int) -> PartitionLog | None:
        """The copy growing in another log directory while the partition moves there."""
        return self._futures.get((topic, partition))

    def create_future(self, topic: str, partition: int, log_dir: Path) -> PartitionLog:
        """An empty copy of the partition in ``log_dir``, starting at its log start offset
        (a copy in another directory is dropped first)."""
        key = (topic, partition)
        current = self._logs[key]
        self.delete_future(topic, partition)
        name = f"{partition_dir_name(topic, partition)}.{uuid.uuid4().hex}{FUTURE_SUFFIX}"
        future = PartitionLog.open(
            log_dir / name, current.config, clock=self._clock, failures=self.failures
        )
        future.truncate_fully_and_start_at(current.log_start_offset)
        self._futures[key] = future
        return future

    def delete_future(self, topic: str, partition: int) -> None:
        future = self._futures.pop((topic, partition), None)
        if future is not None:
            future.delete()

    def replace_with_future(self, topic: str, partition: int) -> PartitionLog:
        """Make the caught-up copy the partition's log: the old directory is renamed
        ``...-delete`` and the copy takes the plain name. Returns the new log; the caller
        deletes the old one once fetches still sending from its files are done."""
        key = (topic, partition)
        old, future = self._logs[key], self._futures.pop(key)
        future.close()
        unique = future.directory.name.removesuffix(FUTURE_SUFFIX).rsplit(".", 1)[1]
        retired = old.directory.with_name(
            f"{partition_dir_name(topic, partition)}.{unique}{DELETE_SUFFIX}"
        )
        old.directory.rename(retired)
        fsync_directory(retired.parent)
        old.directory = retired
        target = future.directory.with_name(partition_dir_name(topic, partition))
        future.directory.rename(target)
        fsync_directory(target.parent)
        replaced = PartitionLog.open(target, old.config, clock=self._clock, failures=self.failures)
        self._logs[key] = replaced
        return replaced

    def delete(self, topic: str, partition: int) -> None:
        """Remove the partition's log and its files, and any copy of it being moved
        (nothing happens if there is none)."""
        self.delete_future(topic, partition)
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
        return sum(
            log.delete_retention_segments(now_ms) for log in self._logs.values() if not log.offline
        )

    async def clean_once(self, executor: Executor | None = None) -> CleanerStats:
        """Clean every compacted log that is dirty enough, one at a time.

        Call on the event loop that uses the logs: planning and swapping run
        here, the reading and writing in ``executor`` (the loop's default if None).
        """
        loop = asyncio.get_running_loop()
        total = CleanerStats()
        for (topic, partition), log in list(self._logs.items()):
            if (topic, partition) in self._futures or log.offline:
                continue  # the copy must see the batches it copies; cleaned after the move
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
        for log in self._every_log():
            if not log.offline:
                log.flush()

    def checkpoint_all(self) -> None:
        """Checkpoint every log; may run on a thread while the event loop adds or removes logs."""
        for log in self._every_log():
            log.checkpoint()

    def close_all(self) -> None:
        for log in self._every_log():
            log.close()
        self._logs.clear()
        self._futures.clear()

    def _every_log(self) -> list[PartitionLog]:
        return [*self._logs.values(), *self._futures.values()]

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)
