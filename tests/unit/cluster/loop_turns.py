"""Counting the event loop's turns, for tests that show work leaves the loop free."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager


class LoopTurns:
    count = 0


@asynccontextmanager
async def counting_turns() -> AsyncIterator[LoopTurns]:
    """How many times the loop ran another task while the block ran."""
    turns = LoopTurns()

    async def ticker() -> None:
        while True:
            turns.count += 1
            await asyncio.sleep(0)

    ticking = asyncio.create_task(ticker())
    try:
        yield turns
    finally:
        ticking.cancel()
