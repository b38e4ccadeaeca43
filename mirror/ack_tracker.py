"""Which source offsets may be committed: those below the first record not yet acknowledged.

Records of a source partition are dispatched in offset order, but when the
target's partition count differs they land on several target partitions and
their acknowledgements can come back out of order. Committing only up to the
first unacknowledged record keeps the mirror at-least-once either way.
Thread-safe: the writer dispatches and acknowledges, the reader commits.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Iterable

Partition = tuple[str, int]


class _PartitionAcks:
    __slots__ = ("done", "next_offset", "pending")

    def __init__(self) -> None:
        self.pending: deque[int] = deque()
        self.done: set[int] = set()
        self.next_offset = -1

    def committable(self) -> int:
        return self.pending[0] if self.pending else self.next_offset


class AckTracker:
    """Per source partition: offsets dispatched to the target and not yet acknowledged."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._partitions: dict[Partition, _PartitionAcks] = {}

    def dispatched(self, partition: Partition, offset: int) -> None:
        with self._lock:
            acks = self._partitions.get(partition)
            if acks is None:
                acks = self._partitions[partition] = _PartitionAcks()
            acks.pending.append(offset)

    def acknowledged(self, partition: Partition, offset: int) -> None:
        with self._lock:
            acks = self._partitions.get(partition)
            if acks is None:
                return  # forgotten after a rebalance; its commit no longer matters
            acks.done.add(offset)
            while acks.pending and acks.pending[0] in acks.done:
                done = acks.pending.popleft()
                acks.done.discard(done)
                acks.next_offset = done + 1

    def committable(self) -> dict[Partition, int]:
        """For each partition with progress: the offset to commit (next record to mirror)."""
        with self._lock:
            return {
                p: acks.committable()
                for p, acks in self._partitions.items()
                if acks.committable() >= 0
            }

    def pending(self) -> int:
        with self._lock:
            return sum(len(acks.pending) for acks in self._partitions.values())

    def forget(self, partitions: Iterable[Partition]) -> None:
        with self._lock:
            for partition in partitions:
                self._partitions.pop(partition, None)
