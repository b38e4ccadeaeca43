"""queued.max.requests and queued.max.request.bytes: at most that many requests hold a
slot, and their frames' bytes; the next waits for one to leave, and leaving twice (a
request that left for a purgatory, then was answered) frees one slot and its bytes once."""

from __future__ import annotations

import asyncio

from prometheus_client import CollectorRegistry, Gauge, Histogram

from odradek.broker.server.request_queue import RequestQueue


def queue(capacity: int, max_bytes: int = -1) -> tuple[RequestQueue, CollectorRegistry]:
    registry = CollectorRegistry()
    size = Gauge("size", "", registry=registry)
    queued_bytes = Gauge("bytes", "", registry=registry)
    queue_time = Histogram("time", "", registry=registry)
    return RequestQueue(capacity, max_bytes, size, queued_bytes, queue_time), registry


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


def test_leaving_gives_back_the_slot_and_the_bytes_of_the_frame() -> None:
    async def scenario() -> None:
        requests, metrics = queue(10, max_bytes=1000)
        await requests.reserve(1, 1000)
        await requests.enter(1)
        assert metrics.get_sample_value("bytes") == 1000
        assert metrics.get_sample_value("size") == 1
        next_frame = asyncio.create_task(requests.reserve(2, 10))
        await asyncio.sleep(0.01)
        assert not next_frame.done(), "read a frame with the bound's bytes all held"
        requests.leave(1)
        await asyncio.wait_for(next_frame, 1)
        assert metrics.get_sample_value("bytes") == 10
        assert metrics.get_sample_value("size") == 0
        requests.leave(1)
        assert metrics.get_sample_value("bytes") == 10

    asyncio.run(scenario())


def test_bytes_given_back_before_the_frame_took_a_slot() -> None:
    """A connection closed while reading a frame's body held bytes and no slot."""

    async def scenario() -> None:
        requests, metrics = queue(1, max_bytes=100)
        await requests.enter(1)
        await requests.reserve(2, 100)
        requests.leave(2)
        assert metrics.get_sample_value("bytes") == 0
        assert metrics.get_sample_value("size") == 1

    asyncio.run(scenario())
