"""Which part of a compacted log to clean now: Kafka's dirty section, lag and ratio rules.

The log splits at the cleaner checkpoint into a clean section (compacted
before) and a dirty one. A cleaning covers the whole log from its start up to
the end of the cleanable dirty segments: sealed ones, entirely below the last
stable offset (so below the high watermark, and holding no transaction whose
outcome is unknown), and older than ``min.compaction.lag.ms``. It runs when dirty bytes
make up at least ``min.cleanable.dirty.ratio`` of that range, or when the oldest
dirty segment began more than ``max.compaction.lag.ms`` ago.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .log_config import LogConfig
from .segment import MAX_RELATIVE_OFFSET, LogSegment
from .transaction_index import AbortedTxn


@dataclass(frozen=True)
class SealedSegment:
    """What the cleaner's thread knows of a sealed segment, captured on the log's thread."""

    base_offset: int
    log_path: Path
    size: int
    next_offset: int
    max_timestamp: int

    @classmethod
    def of(cls, segment: LogSegment) -> SealedSegment:
        return cls(
            segment.base_offset,
            segment.log_path,
            segment.size,
            segment.next_offset,
            segment.max_timestamp,
        )


@dataclass(frozen=True)
class CleaningPlan:
    """One cleaning of one log: its segments ``[log start, end_offset)`` as of planning."""

    directory: Path
    config: LogConfig
    now_ms: int
    first_dirty_offset: int
    end_offset: int
    sources: tuple[SealedSegment, ...]
    aborted: tuple[AbortedTxn, ...]
    """The aborted transactions with data in the range (their markers may lie beyond it)."""
    # the log's segment objects, only for the swap to check they are still the log's
    segments: tuple[LogSegment, ...]

    @property
    def dirty_sources(self) -> tuple[SealedSegment, ...]:
        return tuple(s for s in self.sources if s.base_offset >= self.first_dirty_offset)


def plan_cleaning(
    directory: Path,
    config: LogConfig,
    segments: Sequence[LogSegment],
    cleaned_up_to: int,
    last_stable_offset: int,
    now_ms: int,
) -> CleaningPlan | None:
    """The cleaning a log of ``segments`` is due for, or None if it is not dirty enough."""
    sealed = segments[:-1]  # never the active segment
    if not config.compacts or not sealed:
        return None
    first_dirty = max(cleaned_up_to, sealed[0].base_offset)
    lag_limit = now_ms - config.min_compaction_lag_ms
    cleanable: list[LogSegment] = []
    dirty_bytes = clean_bytes = 0
    for segment in sealed:
        if segment.base_offset < first_dirty:
            clean_bytes += segment.size
            cleanable.append(segment)
            continue
        if segment.next_offset > last_stable_offset or segment.max_timestamp > lag_limit:
            break
        dirty_bytes += segment.size
        cleanable.append(segment)
    total = dirty_bytes + clean_bytes
    if dirty_bytes == 0:
        return None
    first_dirty_segment = next(s for s in cleanable if s.base_offset >= first_dirty)
    overdue = now_ms - first_dirty_segment.rolling_base_ms > config.max_compaction_lag_ms
    if dirty_bytes / total < config.min_cleanable_dirty_ratio and not overdue:
        return None
    sources = tuple(SealedSegment.of(segment) for segment in cleanable)
    end_offset = segments[len(cleanable)].base_offset
    aborted = tuple(
        entry
        for segment in segments
        for entry in segment.txn_index.entries
        if entry.first_offset < end_offset
    )
    return CleaningPlan(
        directory,
        config,
        now_ms,
        first_dirty,
        end_offset,
        sources,
        aborted,
        tuple(cleanable),
    )


def group_for_cleaning(
    sources: Sequence[SealedSegment], max_bytes: int
) -> list[tuple[SealedSegment, ...]]:
    """Runs of consecutive segments that fit one cleaned segment (by their uncleaned size)."""
    groups: list[list[SealedSegment]] = []
    for source in sources:
        group = groups[-1] if groups else None
        if (
            group is not None
            and sum(s.size for s in group) + source.size <= max_bytes
            and source.next_offset - 1 - group[0].base_offset <= MAX_RELATIVE_OFFSET
        ):
            group.append(source)
        else:
            groups.append([source])
    return [tuple(group) for group in groups]
