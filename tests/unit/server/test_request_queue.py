"""queued.max.requests: at most that many requests hold a slot; the next waits for one to
leave, and leaving twice (a request that left for a purgatory, then was answered) frees
one slot only."""

from __future__ import annotations

import asyncio

from prometheus_client import CollectorRegistry, Gauge, Histogram

from odradek.broker.server.request_queue import RequestQueue


def queue(capacity: int) -> tuple[RequestQueue, CollectorRegistry]:
    registry = CollectorRegistry()
    size = Gauge("size", "", registry=registry)
    return RequestQueue(capacity, size, Histogram("time", "", registry=registry)), registry


def test_a_request_waits_until_a_slot_is_left() -> None:
    async def scenario() -> None:
        requests, metrics = queue(2)
        await requests.enter(1)
        await requests.enter(2)
        third = asyncio.create_task(requests.enter(3))
        await asyncio.sleep(0.01)
        assert not third.done()
        assert metrics.get_sample_value("size") == 2
        requests.leave(1)
        await asyncio.wait_for(third, 1)
        assert metrics.get_sample_value("size") == 2

    asyncio.run(scenario())


def test_leaving_twice_frees_one_slot() -> None:
    async def scenario() -> None:
        requests, metrics = queue(1)
        await requests.enter(1)
        requests.leave(1)
        requests.leave(1)
        await requests.enter(2)
        blocked = asyncio.create_task(requests.enter(3))
        await asyncio.sleep(0.01)
        assert not blocked.done(), "a second leave freed a second slot"
        blocked.cancel()
        assert metrics.get_sample_value("size") == 1

    asyncio.run(scenario())
