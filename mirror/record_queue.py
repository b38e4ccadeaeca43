"""The bounded hand-off between the source reader and the target writer.

Bounded by records: when the target is slower than the source the reader
blocks in ``put`` and stops fetching (back-pressure), so memory stays bounded
by ``capacity`` records plus one fetch batch.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from typing import Generic, TypeVar

T = TypeVar("T")


class RecordQueue(Generic[T]):
    """A FIFO of record batches holding at most ``capacity`` records (one oversized batch fits)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self._batches: deque[Sequence[T]] = deque()
        self._records = 0
        self._unfinished = 0
        self._changed = threading.Condition()

    def __len__(self) -> int:
        return self._records

    def put(self, batch: Sequence[T], stop: threading.Event, timeout: float = 0.1) -> bool:
        """Append ``batch``, waiting for room; False if ``stop`` was set first."""
        with self._changed:
            while self._records and self._records + len(batch) > self.capacity:
                if stop.is_set():
                    return False
                self._changed.wait(timeout)
            self._batches.append(batch)
            self._records += len(batch)
            self._unfinished += len(batch)
            self._changed.notify_all()
            return True

    def get(self, timeout: float) -> Sequence[T] | None:
        """The oldest batch, or None if none came within ``timeout`` seconds."""
        with self._changed:
            if not self._batches and not self._changed.wait_for(lambda: self._batches, timeout):
                return None
            batch = self._batches.popleft()
            self._records -= len(batch)
            self._changed.notify_all()
            return batch

    def done(self, count: int) -> None:
        """The taker finished handling ``count`` records it got."""
        with self._changed:
            self._unfinished -= count

    def unfinished(self) -> int:
        """Records put and not yet reported done: queued or being handled."""
        return self._unfinished
