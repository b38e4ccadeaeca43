"""The log cleaner: compacts ``cleanup.policy=compact`` logs off the event loop.

A cleaning has three steps, split by thread:

- ``plan`` (the log's thread): pick the range from the log's in-memory state.
- ``write`` (any thread): read the sealed segments of the plan through its own
  file handles, build the offset map, write ``.cleaned`` segment files. It
  touches no ``PartitionLog`` state, and sealed segment files never change,
  so it needs no lock.
- ``swap`` (the log's thread): if the log still holds the planned segments,
  commit the swap (see ``segment_swap``) and replace them in the log.

docs/log-cleaner.md describes the design.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from io import FileIO

from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.records import BatchHeader, read_header
from .cleaning_plan import CleaningPlan, SealedSegment, group_for_cleaning, plan_cleaning
from .compaction import (
    CleanedTransactions,
    CompactedBatch,
    OffsetMap,
    add_to_offset_map,
    compact_batch,
    retain_marker,
)
from .file_io import fsync_directory
from .partition_log import PartitionLog
from .recovery import read_checked_batches
from .segment import SEGMENT_SUFFIXES, LogSegment, segment_path
from .segment_swap import CLEANED_SUFFIX, SegmentSwap, discard_cleaned

logger = logging.getLogger(__name__)

DEFAULT_MAX_MAP_ENTRIES = 4_000_000  # like Kafka's 128 MiB dedupe buffer at ~32 bytes a key
WRITE_CHUNK = 1 << 20


@dataclass(frozen=True)
class CleanerStats:
    """What cleanings did; sums with ``+``."""

    runs: int = 0  # cleanings swapped into a log
    bytes_read: int = 0
    bytes_reclaimed: int = 0
    records_removed: int = 0

    def __add__(self, other: CleanerStats) -> CleanerStats:
        return CleanerStats(
            self.runs + other.runs,
            self.bytes_read + other.bytes_read,
            self.bytes_reclaimed + other.bytes_reclaimed,
            self.records_removed + other.records_removed,
        )


@dataclass(frozen=True)
class CleanedLog:
    """Cleaned segment files written aside, ready to swap in."""

    plan: CleaningPlan
    swap: SegmentSwap
    stats: CleanerStats


class LogCleaner:
    def __init__(self, max_map_entries: int = DEFAULT_MAX_MAP_ENTRIES) -> None:
        self.max_map_entries = max_map_entries

    def plan(self, log: PartitionLog, now_ms: int) -> CleaningPlan | None:
        """On the log's thread: the cleaning ``log`` is due for, if any."""
        return plan_cleaning(
            log.directory,
            log.config,
            log.segments,
            log.cleaned_up_to,
            log.last_stable_offset,
            now_ms,
        )

    def write(self, plan: CleaningPlan) -> CleanedLog:
        """On any thread: write the cleaned segments of ``plan`` aside.

        Raises ``OSError`` or ``KafkaError`` if a segment vanished or is
        corrupt; the cleaned files are then discarded by the next swap or open.
        """
        offset_map, end_offset = self._build_offset_map(plan)
        sources = [s for s in plan.sources if s.base_offset < end_offset]
        groups = group_for_cleaning(sources, plan.config.segment_bytes)
        written = removed = 0
        transactions = CleanedTransactions(plan.aborted)  # met in offset order, across groups
        for group in groups:
            size, group_removed = self._write_segment(plan, group, offset_map, transactions)
            written += size
            removed += group_removed
        # the cleaned files must be durable before a swap manifest can name them
        fsync_directory(plan.directory)
        read = sum(source.size for source in sources)
        swap = SegmentSwap(
            tuple(tuple(source.base_offset for source in group) for group in groups), end_offset
        )
        return CleanedLog(plan, swap, CleanerStats(1, read, read - written, removed))

    def swap(self, log: PartitionLog, cleaned: CleanedLog) -> CleanerStats:
        """On the log's thread: replace the segments, unless the log changed meanwhile."""
        expected = [
            (s, source.size)
            for s, source in zip(cleaned.plan.segments, cleaned.plan.sources, strict=True)
        ]
        if log.install_cleaned(cleaned.swap, expected):
            logger.info(
                "%s: cleaned up to offset %d, %d bytes reclaimed, %d records removed",
                log.directory.name,
                cleaned.swap.cleaned_up_to,
                cleaned.stats.bytes_reclaimed,
                cleaned.stats.records_removed,
            )
            return cleaned.stats
        logger.info("%s: log changed while cleaning; cleaning discarded", log.directory.name)
        self.discard(log)
        return CleanerStats()

    def discard(self, log: PartitionLog) -> None:
        """On the log's thread: delete the cleaned files of a failed or stale cleaning."""
        if log.directory.exists():
            discard_cleaned(log.directory)

    def clean(self, log: PartitionLog, now_ms: int) -> CleanerStats:
        """Plan, write and swap on the caller's thread (tests, tools)."""
        plan = self.plan(log, now_ms)
        if plan is None:
            return CleanerStats()
        return self.swap(log, self.write(plan))

    def _build_offset_map(self, plan: CleaningPlan) -> tuple[OffsetMap, int]:
        """The map over the dirty segments, and where the cleaning ends.

        A full map ends the cleaning early, at a segment boundary, as Kafka's does.
        """
        offset_map: OffsetMap = {}
        transactions = CleanedTransactions(plan.aborted)
        for source in plan.dirty_sources:
            if len(offset_map) >= self.max_map_entries:
                return offset_map, source.base_offset
            for header, batch in _read_sealed(source):
                if transactions.aborted(header) is None:  # aborted records supersede nothing
                    add_to_offset_map(offset_map, batch, header)
        return offset_map, plan.end_offset

    def _write_segment(
        self,
        plan: CleaningPlan,
        group: tuple[SealedSegment, ...],
        offset_map: OffsetMap,
        transactions: CleanedTransactions,
    ) -> tuple[int, int]:
        """Write the cleaned segment replacing ``group``; its size and the records removed."""
        base = group[0].base_offset
        for suffix in SEGMENT_SUFFIXES:
            segment_path(plan.directory, base, suffix + CLEANED_SUFFIX).unlink(missing_ok=True)
        segment = LogSegment(plan.directory, base, plan.now_ms, suffix=CLEANED_SUFFIX)
        removed = 0
        try:
            for source in group:
                # Kafka keeps a tombstone delete.retention.ms past its segment's last write
                drop_tombstones = (
                    source.max_timestamp + plan.config.delete_retention_ms <= plan.now_ms
                )
                pending = bytearray()
                headers: list[BatchHeader] = []
                for header, batch in _read_sealed(source):
                    compacted = _transactional(plan, segment, transactions, header, batch)
                    if compacted is None:
                        compacted = compact_batch(batch, header, offset_map, drop_tombstones)
                    removed += compacted.removed
                    if compacted.data is None:
                        continue
                    start = len(pending)
                    pending += compacted.data
                    headers.append(read_header(pending, start))
                    if len(pending) >= WRITE_CHUNK:
                        segment.append(
                            pending, headers, plan.config.index_interval_bytes, plan.now_ms
                        )
                        pending, headers = bytearray(), []
                if headers:
                    segment.append(pending, headers, plan.config.index_interval_bytes, plan.now_ms)
            segment.write_final_time_index_entry()
            segment.txn_index.path.touch()  # even empty: the swap replaces every file
            segment.flush()
            return segment.size, removed
        finally:
            segment.close()


def _transactional(
    plan: CleaningPlan,
    segment: LogSegment,
    transactions: CleanedTransactions,
    header: BatchHeader,
    batch: memoryview,
) -> CompactedBatch | None:
    """What a marker, or a batch of an aborted transaction, becomes (a marker that keeps
    guarding aborted data keeps its index entry, in the cleaned segment); None for a batch
    compacted by key."""
    if header.is_control:
        guards, entry = transactions.guarded(header, batch)
        if entry is not None:
            segment.txn_index.append(entry)
        retention_ms = plan.config.delete_retention_ms
        return retain_marker(batch, header, guards, plan.now_ms, retention_ms)
    if transactions.discards(header):
        return CompactedBatch(None, header.records_count)
    return None


def _read_sealed(source: SealedSegment) -> Iterator[tuple[BatchHeader, memoryview]]:
    """Every batch of a sealed segment, read through a handle of this thread's own."""
    end = 0
    with FileIO(source.log_path, "rb") as file:
        for position, header, batch in read_checked_batches(file.fileno(), source.size):
            yield header, batch
            end = position + header.size
    if end != source.size:
        raise KafkaError(
            ErrorCode.corrupt_message,
            f"{source.log_path}: unreadable batch at position {end} while cleaning",
        )
