"""Fixtures for the log tests: a controllable clock and logs in tmp_path released at teardown."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from log_testing import FakeClock, OpenLog, abandon

from odradek.broker.log import LogConfig, PartitionLog


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def open_log(tmp_path: Path, clock: FakeClock) -> Iterator[OpenLog]:
    """Open a PartitionLog in ``tmp_path/topic-0`` (again, to simulate a restart)."""
    opened: list[PartitionLog] = []

    def _open(config: LogConfig | None = None, directory: Path | None = None) -> PartitionLog:
        path = directory or tmp_path / "topic-0"
        log = PartitionLog.open(path, config or LogConfig(), clock=clock, monotonic=clock.monotonic)
        opened.append(log)
        return log

    yield _open
    for log in opened:
        abandon(log)
