"""Which of a log's oldest segments retention deletes: Kafka's time, size and start rules."""

from __future__ import annotations

from collections.abc import Sequence

from .log_config import LogConfig
from .segment import LogSegment


def deletable_segments(
    segments: Sequence[LogSegment],
    config: LogConfig,
    now_ms: int,
    high_watermark: int,
    log_start_offset: int,
    *,
    by_retention: bool = True,
) -> int:
    """How many of the oldest ``segments`` go.

    A segment goes when it lies wholly below the high watermark and either
    wholly below the log start offset (DeleteRecords) or, with
    ``by_retention`` and cleanup.policy delete, its largest timestamp is older
    than retention.ms or the log without it still holds at least
    retention.bytes. The active segment may go too (the log rolls first),
    unless it is empty.
    """
    remaining = sum(segment.size for segment in segments)
    count = 0
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        upper = segment.next_offset if last else segments[index + 1].base_offset
        if (last and segment.size == 0) or upper > high_watermark:
            break
        expired = (
            by_retention
            and config.deletes
            and (
                (config.retention_ms >= 0 and now_ms - segment.max_timestamp > config.retention_ms)
                or (
                    config.retention_bytes >= 0
                    and remaining - segment.size >= config.retention_bytes
                )
            )
        )
        if not (expired or upper <= log_start_offset):
            break
        remaining -= segment.size
        count += 1
    return count
