"""ListOffsets by timestamp, exact to the record: the time index, then the located batch."""

from __future__ import annotations

from collections.abc import Sequence

from ..protocol.record_codec import decode_batch
from ..protocol.records import BatchHeader
from .segment import LogSegment


def offset_for_timestamp(
    segments: Sequence[LogSegment], log_start_offset: int, timestamp: int
) -> tuple[int, int] | None:
    """(offset, timestamp) of the first record at or after the log start with a timestamp
    >= ``timestamp``, or None."""
    for segment in segments:
        if segment.max_timestamp < timestamp:
            continue
        start = max(segment.time_index.lookup(timestamp), log_start_offset)
        for position, header in segment.headers_from(segment.offset_index.lookup(start)):
            if header.last_offset >= start and header.max_timestamp >= timestamp:
                found = _first_record(segment, position, header, timestamp, start)
                if found is not None:
                    return found
    return None


def max_timestamp(segments: Sequence[LogSegment], log_start_offset: int) -> tuple[int, int]:
    """(timestamp, offset) of the first record with the log's largest timestamp; (-1, -1)
    for an empty log."""
    best = max(segments, key=lambda segment: segment.max_timestamp, default=None)
    if best is None or best.max_timestamp < 0:
        return -1, -1
    found = best.find(best.offset_of_max_timestamp)
    if found is not None:
        position, header = found
        record = _first_record(best, position, header, best.max_timestamp, log_start_offset)
        if record is not None:
            return record[1], record[0]
    return best.max_timestamp, max(best.offset_of_max_timestamp, log_start_offset)


def _first_record(
    segment: LogSegment, position: int, header: BatchHeader, timestamp: int, min_offset: int
) -> tuple[int, int] | None:
    _, records = decode_batch(segment.read_bytes(position, header.size))
    for record in records:
        if record.timestamp >= timestamp and record.offset >= min_offset:
            return record.offset, record.timestamp
    return None
