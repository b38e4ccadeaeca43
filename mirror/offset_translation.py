"""Source -> target offset translation for one mirrored partition.

The mirror records, for every acknowledged record, its source offset and the
target offset it got. Consecutive records that advance both by one form a
*run*, so a steady stream is one run; source gaps (compaction, transaction
markers) and re-mirrored records after a restart start new ones. A committed
source offset ``c`` (the next record to read) translates to the target offset
right after the target copy of the last record below ``c``: a consumer that
starts there misses nothing and, unless the mirror re-sent records, re-reads
nothing.
"""

from __future__ import annotations

import bisect
import threading
from dataclasses import dataclass

MAX_RUNS = 1000


@dataclass(slots=True)
class OffsetRun:
    """Source offsets ``source_start..source_end`` are at ``target_start + (s - source_start)``."""

    source_start: int
    source_end: int
    target_start: int

    @property
    def target_end(self) -> int:
        return self.target_start + self.source_end - self.source_start


class OffsetMap:
    """The runs of one partition, oldest first; a bounded number are kept."""

    def __init__(self, max_runs: int = MAX_RUNS) -> None:
        self.runs: list[OffsetRun] = []
        self._starts: list[int] = []
        self.max_runs = max_runs

    def record(self, source_offset: int, target_offset: int) -> None:
        """Note that the record at ``source_offset`` is now at ``target_offset``."""
        if self.runs:
            last = self.runs[-1]
            if source_offset == last.source_end + 1 and target_offset == last.target_end + 1:
                last.source_end = source_offset
                return
            if source_offset <= last.source_end:
                self._forget_from(source_offset)  # mirrored again: the newest copy wins
        self.runs.append(OffsetRun(source_offset, source_offset, target_offset))
        self._starts.append(source_offset)
        if len(self.runs) > self.max_runs:
            del self.runs[0], self._starts[0]

    def _forget_from(self, source_offset: int) -> None:
        keep = bisect.bisect_left(self._starts, source_offset)
        del self.runs[keep:], self._starts[keep:]
        if self.runs and self.runs[-1].source_end >= source_offset:
            self.runs[-1].source_end = source_offset - 1

    def translate(self, committed: int) -> int | None:
        """Target offset to resume from for a source commit, or None if not known here."""
        index = bisect.bisect_right(self._starts, committed - 1) - 1
        if index < 0:
            return None
        run = self.runs[index]
        last_read = min(committed - 1, run.source_end)
        return run.target_start + (last_read - run.source_start) + 1

    def latest(self) -> OffsetRun | None:
        return self.runs[-1] if self.runs else None


class OffsetMaps:
    """The maps of every mirrored partition; thread-safe (the writer records, others read)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._maps: dict[tuple[str, int], OffsetMap] = {}

    def record(self, partition: tuple[str, int], source_offset: int, target_offset: int) -> None:
        with self._lock:
            offsets = self._maps.get(partition)
            if offsets is None:
                offsets = self._maps[partition] = OffsetMap()
            offsets.record(source_offset, target_offset)

    def restore(self, partition: tuple[str, int], run: OffsetRun) -> None:
        """Seed a partition this process has not mirrored with a run from the offset-syncs topic."""
        with self._lock:
            if partition not in self._maps:
                offsets = self._maps[partition] = OffsetMap()
                offsets.record(run.source_start, run.target_start)
                offsets.runs[0].source_end = run.source_end

    def translate(self, partition: tuple[str, int], committed: int) -> int | None:
        with self._lock:
            offsets = self._maps.get(partition)
            return offsets.translate(committed) if offsets else None

    def latest(self) -> dict[tuple[str, int], OffsetRun]:
        """A copy of the newest run of each partition."""
        with self._lock:
            return {
                p: OffsetRun(r.source_start, r.source_end, r.target_start)
                for p, m in self._maps.items()
                if (r := m.latest()) is not None
            }
