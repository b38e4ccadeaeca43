"""Test helpers: a controllable clock, simulated crashes, and reading back fetch regions."""

from __future__ import annotations

import os
from collections.abc import Callable

from batch_builder import NOW_MS

from odradek.broker.log import PartitionLog, ReadResult
from odradek.broker.protocol.record_codec import Record, decode_batch
from odradek.broker.protocol.records import BatchHeader, iter_batches

OpenLog = Callable[..., PartitionLog]  # the open_log fixture: (config=None, directory=None)


class FakeClock:
    """A wall clock (seconds, like time.time) and a monotonic one that move only when told."""

    def __init__(self) -> None:
        self.now = NOW_MS / 1000
        self.elapsed = 0.0

    def __call__(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.elapsed

    def advance_ms(self, ms: int) -> None:
        """Let time pass: both clocks move."""
        self.now += ms / 1000
        self.elapsed += ms / 1000

    def step_ms(self, ms: int) -> None:
        """Step the wall clock alone (forward or back), as NTP or an operator's date does."""
        self.now += ms / 1000


def abandon(log: PartitionLog) -> None:
    """Release a log's files without a clean shutdown, as if its process had died."""
    if not log._closed:
        log._close_files()


def region_bytes(result: ReadResult) -> bytes:
    return b"".join(
        os.pread(region.file.fileno(), region.length, region.position) for region in result.regions
    )


def read_batches(log: PartitionLog, offset: int, max_bytes: int = 1 << 30) -> list[BatchHeader]:
    """Headers of the batches a read from ``offset`` returns; checks they are whole and valid."""
    return list(iter_batches(region_bytes(log.read(offset, max_bytes))))


def same_batch(stored: bytes, sent: bytes) -> bool:
    """Whether ``stored`` is ``sent`` with only baseOffset and partitionLeaderEpoch rewritten."""
    return stored[8:12] == sent[8:12] and stored[16:] == sent[16:]


def read_records(log: PartitionLog, offset: int | None = None) -> list[Record]:
    """Every record a read from ``offset`` (default: the log start) returns, decoded."""
    data = region_bytes(log.read(log.log_start_offset if offset is None else offset, 1 << 30))
    records: list[Record] = []
    for header in iter_batches(data):
        records += decode_batch(memoryview(data)[header.position : header.position + header.size])[
            1
        ]
    return records
