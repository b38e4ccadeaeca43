"""Kafka's bound on bytes of requests read but not yet answered (``queued.max.request.bytes``).

As Kafka's SocketServer uses its SimpleMemoryPool (non-strict): a frame is admitted
whenever fewer bytes than the bound are held, whatever its size, so the bytes held stay
below the bound plus one frame, and a frame larger than the whole bound is admitted alone
rather than never. Frames waiting for room are admitted in the order they asked.
"""

from __future__ import annotations

import asyncio
from collections import deque


class MemoryPool:
    """Bytes held by the frame each owner (a connection) has been admitted to read."""

    def __init__(self, max_bytes: int) -> None:
        """``max_bytes`` of 0 or less: no limit (Kafka's MemoryPool.NONE)."""
        self._max_bytes = max_bytes
        self.used = 0
        self._held: dict[int, int] = {}
        self._waiters: deque[tuple[int, int, asyncio.Future[None]]] = deque()

    async def allocate(self, owner: int, size: int) -> None:
        """Wait until ``owner`` may read a frame of ``size`` bytes, and hold them for it."""
        if not self._waiters and self._has_room():
            self._hold(owner, size)
            return
        admitted = asyncio.get_running_loop().create_future()
        self._waiters.append((owner, size, admitted))
        # if cancelled once admitted, the bytes are the owner's to release
        await admitted

    def release(self, owner: int) -> None:
        """Give back what ``owner`` holds, if anything, and admit the frames that then fit."""
        size = self._held.pop(owner, None)
        if size is None:
            return
        self.used -= size
        while self._waiters and self._has_room():
            waiting, wanted, admitted = self._waiters.popleft()
            if not admitted.cancelled():
                self._hold(waiting, wanted)
                admitted.set_result(None)

    def _has_room(self) -> bool:
        return self._max_bytes <= 0 or self.used < self._max_bytes

    def _hold(self, owner: int, size: int) -> None:
        self._held[owner] = size
        self.used += size
