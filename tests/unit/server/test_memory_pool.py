"""queued.max.request.bytes as Kafka's non-strict SimpleMemoryPool: a frame is admitted
while fewer bytes than the bound are held, whatever its size; the others wait, and are
admitted in the order they asked once bytes are given back."""

from __future__ import annotations

import asyncio

from odradek.broker.server.memory_pool import MemoryPool


async def waits(allocation: asyncio.Task[None]) -> bool:
    await asyncio.sleep(0.01)
    return not allocation.done()


def test_a_frame_is_admitted_while_fewer_bytes_than_the_bound_are_held() -> None:
    async def scenario() -> None:
        pool = MemoryPool(100)
        await pool.allocate(1, 60)
        await pool.allocate(2, 60)  # 60 held, under 100: admitted, going over by one frame
        assert pool.used == 120
        third = asyncio.create_task(pool.allocate(3, 1))
        assert await waits(third)
        pool.release(2)
        await asyncio.wait_for(third, 1)
        assert pool.used == 61

    asyncio.run(scenario())


def test_a_frame_larger_than_the_whole_bound_is_admitted_alone() -> None:
    async def scenario() -> None:
        pool = MemoryPool(100)
        await asyncio.wait_for(pool.allocate(1, 500), 1)
        second = asyncio.create_task(pool.allocate(2, 10))
        assert await waits(second)
        pool.release(1)
        await asyncio.wait_for(second, 1)
        assert pool.used == 10

    asyncio.run(scenario())


def test_waiting_frames_are_admitted_in_order_while_there_is_room() -> None:
    async def scenario() -> None:
        pool = MemoryPool(100)
        await pool.allocate(1, 100)
        admitted: list[int] = []

        async def allocate(owner: int, size: int) -> None:
            await pool.allocate(owner, size)
            admitted.append(owner)

        waiting = [asyncio.create_task(allocate(owner, 40)) for owner in (2, 3, 4)]
        await asyncio.sleep(0.01)
        later = asyncio.create_task(allocate(5, 1))  # room or not, it waits its turn
        await asyncio.sleep(0.01)
        assert admitted == []
        pool.release(1)
        await asyncio.sleep(0.01)
        assert admitted == [2, 3, 4]  # 0, 40, 80 held when each was admitted
        assert await waits(later)
        pool.release(3)
        await asyncio.wait_for(later, 1)
        assert admitted == [2, 3, 4, 5]
        assert pool.used == 81
        assert all(task.done() for task in waiting)

    asyncio.run(scenario())


def test_a_frame_given_up_while_waiting_holds_nothing() -> None:
    async def scenario() -> None:
        pool = MemoryPool(100)
        await pool.allocate(1, 100)
        given_up = asyncio.create_task(pool.allocate(2, 50))
        next_one = asyncio.create_task(pool.allocate(3, 50))
        await asyncio.sleep(0.01)
        given_up.cancel()
        pool.release(2)  # its connection closing: nothing to give back
        assert pool.used == 100
        pool.release(1)
        await asyncio.wait_for(next_one, 1)
        assert pool.used == 50

    asyncio.run(scenario())


def test_without_a_limit_nothing_waits_and_the_bytes_are_still_counted() -> None:
    async def scenario() -> None:
        pool = MemoryPool(-1)
        for owner in range(10):
            await asyncio.wait_for(pool.allocate(owner, 1 << 30), 1)
        assert pool.used == 10 << 30

    asyncio.run(scenario())
