"""The loop watchdog names where a stalled event loop is stuck, and for how long it was."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest

from odradek.broker.server.loop_watchdog import LoopWatchdog

THRESHOLD_S = 0.2


def block_the_loop_for(seconds: float) -> None:
    time.sleep(seconds)


def test_a_stall_is_logged_with_the_stack_it_is_stuck_in_and_counted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    watchdog = LoopWatchdog(THRESHOLD_S)

    async def scenario() -> None:
        watchdog.start()
        await asyncio.sleep(THRESHOLD_S)  # turning: nothing to report
        assert watchdog.stalls == 0
        block_the_loop_for(4 * THRESHOLD_S)
        await asyncio.sleep(THRESHOLD_S)  # the next beat reports the stall's length
        watchdog.stop()

    with caplog.at_level(logging.WARNING, logger="odradek.broker.server.loop_watchdog"):
        asyncio.run(scenario())
    during, after = (record.getMessage() for record in caplog.records)
    assert "event loop stalled for" in during and "so far, in:" in during
    assert "in block_the_loop_for" in during and "time.sleep(seconds)" in during
    assert after.startswith("event loop stalled for")
    assert watchdog.stalls == 1
    assert 3 * THRESHOLD_S <= watchdog.stalled_s < 10 * THRESHOLD_S


def test_a_loop_that_keeps_turning_reports_nothing(caplog: pytest.LogCaptureFixture) -> None:
    watchdog = LoopWatchdog(1.0)

    async def scenario() -> None:
        watchdog.start()
        for _ in range(20):
            block_the_loop_for(0.05)  # short stalls, far below the threshold
            await asyncio.sleep(0)
        watchdog.stop()

    with caplog.at_level(logging.WARNING, logger="odradek.broker.server.loop_watchdog"):
        asyncio.run(scenario())
    assert not caplog.records
    assert watchdog.stalls == 0
