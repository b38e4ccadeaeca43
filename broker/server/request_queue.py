"""Kafka's bound on requests read but not yet answered (``queued.max.requests``).

A connection takes a slot for each complete request frame before decoding it, and
gives it back once the response is ready, before writing it (a client slow to read
holds no slot). While every slot is taken a
connection holding a frame waits, reads nothing more, and its client's requests back up
in TCP. A request that starts waiting in a purgatory (a long-polling Fetch, an acks=all
Produce, JoinGroup, SyncGroup) leaves the queue early, as a Kafka request leaves the
request channel when a handler thread takes it: such waits are bounded by the client's
timeouts, not by the broker's capacity, and must not starve other clients.
"""

from __future__ import annotations

import asyncio
import time

from prometheus_client import Gauge, Histogram


class RequestQueue:
    """Slots for requests in flight, one at most per connection (it reads one at a time)."""

    def __init__(self, capacity: int, size: Gauge, queue_time: Histogram) -> None:
        self._slots = asyncio.Semaphore(capacity)
        self._holders: set[int] = set()
        self._queue_time = queue_time
        size.set_function(lambda: len(self._holders))

    async def enter(self, connection_id: int) -> None:
        """Wait for a slot for the request just read on ``connection_id``."""
        started = time.perf_counter()
        await self._slots.acquire()
        self._holders.add(connection_id)
        self._queue_time.observe(time.perf_counter() - started)

    def leave(self, connection_id: int) -> None:
        """Free ``connection_id``'s slot, if its request still holds one."""
        if connection_id in self._holders:
            self._holders.remove(connection_id)
            self._slots.release()
