"""Moves replicas between this broker's log directories (AlterReplicaLogDirs, KIP-113).

A move copies the replica's batches into a future log in the destination directory, as a
follower would append them, while the replica goes on serving from its current log.
Once the copy holds the whole log, it replaces the current log within one step of the
event loop, so no append falls between the last copy and the swap. The old files go after
``file.delete.delay.ms``, when fetches still sending from them are done.
"""

from __future__ import annotations

import asyncio
import logging

from odradek.broker.cluster.partition import Partition, PartitionKey
from odradek.broker.log.log_manager import LogManager
from odradek.broker.protocol.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)

COPY_CHUNK_BYTES = 1 << 20  # per step of the event loop
IDLE_WAIT_S = 1.0  # an idle move re-checks this often even without appends


class LogDirMover:
    """One copying task per replica being moved."""

    def __init__(self, logs: LogManager) -> None:
        self._logs = logs
        self._moves: dict[PartitionKey, asyncio.Task[None]] = {}

    def alter(self, partition: Partition | None, key: PartitionKey, path: str) -> None:
        """Move the replica ``key`` to the log directory ``path``: LOG_DIR_NOT_FOUND if that
        is none of log.dirs, REPLICA_NOT_AVAILABLE if the replica is not here yet (it will
        be created there). Moving to where it already is cancels a move under way."""
        destination = self._logs.known_log_dir(path)
        if partition is None:
            self._logs.prefer_log_dir(key.topic, key.partition, destination)
            raise KafkaError(ErrorCode.replica_not_available, f"{key} is not on this broker")
        future = partition.future_log
        if future is not None and future.directory.parent == destination:
            return  # already on its way there
        self.cancel(partition)
        if partition.log.directory.parent == destination:
            return
        partition.future_log = self._logs.create_future(key.topic, key.partition, destination)
        log.info("%s: moving from %s to %s", key, partition.log.directory.parent, destination)
        self.resume(partition)

    def resume(self, partition: Partition) -> None:
        """Go on copying into the partition's future log (a move begun before a restart)."""
        if partition.future_log is not None and partition.key not in self._moves:
            self._moves[partition.key] = asyncio.get_running_loop().create_task(
                self._copy(partition), name=f"move {partition.key}"
            )

    def cancel(self, partition: Partition) -> None:
        """Stop a move under way and drop its copy."""
        task = self._moves.pop(partition.key, None)
        if task is not None:
            task.cancel()
        if partition.future_log is not None:
            partition.future_log = None
            self._logs.delete_future(partition.key.topic, partition.key.partition)

    async def stop(self) -> None:
        """Stop copying; the future logs stay on disk and the moves resume at the next start."""
        tasks, self._moves = list(self._moves.values()), {}
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _copy(self, partition: Partition) -> None:
        key = partition.key
        try:
            while True:
                copied, caught_up = partition.copy_to_future(COPY_CHUNK_BYTES)
                if caught_up:
                    self._swap(partition)
                    return
                if copied:
                    await asyncio.sleep(0)  # let requests in between chunks
                else:
                    await asyncio.wait([partition.wait_for_change()], timeout=IDLE_WAIT_S)
        except (OSError, KafkaError) as error:
            log.warning("%s: move to another log directory failed, dropped: %s", key, error)
            self._moves.pop(key, None)
            self.cancel(partition)

    def _swap(self, partition: Partition) -> None:
        key = partition.key
        self._moves.pop(key, None)
        old = partition.log
        moved = self._logs.replace_with_future(key.topic, key.partition)
        partition.adopt_moved_log(moved)
        delay_s = old.config.file_delete_delay_ms / 1000
        asyncio.get_running_loop().call_later(delay_s, old.delete)
        log.info("%s: moved to %s", key, moved.directory.parent)
