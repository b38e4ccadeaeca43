"""Kafka's bounds on requests read but not yet answered: ``queued.max.requests`` and
``queued.max.request.bytes``.

A connection takes the bytes of a frame from the memory pool once its size is known,
before reading its body, and a slot once the frame is read, before decoding it; it gives
both back once the response is ready, before writing it (a client slow to read holds
neither). While the bytes or every slot are taken a connection waits, reads nothing more,
and its client's requests back up in TCP. A request that starts waiting in a purgatory (a
long-polling Fetch, an acks=all Produce, JoinGroup, SyncGroup) leaves the queue early, as
a Kafka request leaves the request channel, and its buffer the memory pool, when a handler
thread takes it: such waits are bounded by the client's timeouts, not by the broker's
capacity, and must not starve other clients.
"""

from __future__ import annotations

import asyncio
import time

from prometheus_client import Gauge, Histogram

from odradek.broker.server.memory_pool import MemoryPool


class RequestQueue:
    """Slots and bytes for requests in flight, one at most per connection (it reads one at
    a time)."""

    def __init__(
        self,
        capacity: int,
        max_bytes: int,
        size: Gauge,
        queued_bytes: Gauge,
        queue_time: Histogram,
    ) -> None:
        self._slots = asyncio.Semaphore(capacity)
        self._holders: set[int] = set()
        self._memory = MemoryPool(max_bytes)
        self._queue_time = queue_time
        size.set_function(lambda: len(self._holders))
        queued_bytes.set_function(lambda: self._memory.used)

    async def reserve(self, connection_id: int, frame_size: int) -> None:
        """Wait until ``connection_id`` may read the body of a frame of ``frame_size`` bytes."""
        await self._memory.allocate(connection_id, frame_size)

    async def enter(self, connection_id: int) -> None:
        """Wait for a slot for the request just read on ``connection_id``."""
        started = time.perf_counter()
        await self._slots.acquire()
        self._holders.add(connection_id)
        self._queue_time.observe(time.perf_counter() - started)

    def leave(self, connection_id: int) -> None:
        """Free ``connection_id``'s slot and bytes, if its request still holds them."""
        self._memory.release(connection_id)
        if connection_id in self._holders:
            self._holders.remove(connection_id)
            self._slots.release()
