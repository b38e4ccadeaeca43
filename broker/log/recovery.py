"""Re-validation of segments written before an unclean stop, and checked reads of sealed ones."""

from __future__ import annotations

import os
from collections.abc import Iterator

from ..protocol.errors import KafkaError
from ..protocol.records import (
    HEADER_SIZE,
    LOG_OVERHEAD,
    BatchHeader,
    iter_batches,
    peek_offset_and_length,
)
from .segment import LogSegment

READ_CHUNK = 1 << 20


def may_follow(base_offset: int, expected_offset: int, gaps_below: int) -> bool:
    """Whether a batch (or segment) at ``base_offset`` may follow a log ending at
    ``expected_offset``.

    Appends are contiguous; only the cleaner leaves gaps, and only below the
    offset it has cleaned up to (``gaps_below``), so contiguity still catches
    a corrupt baseOffset (it lies outside the CRC) in the rest of the log.
    """
    if base_offset < gaps_below:
        return base_offset >= expected_offset
    return base_offset == max(expected_offset, gaps_below)


def recover_segment(
    segment: LogSegment, expected_offset: int, index_interval_bytes: int, gaps_below: int = 0
) -> int:
    """Keep the longest run of valid batches that follow on, re-index it, return the next offset.

    A batch is valid when its framing and CRC-32C check and its base offset
    may follow the previous batch (``may_follow``). Everything after the first
    invalid batch is cut; the caller reports what was dropped.
    """
    segment.reset_indexes()
    valid_end = 0
    for position, header, _ in read_checked_batches(segment.file.fileno(), segment.size):
        if not may_follow(header.base_offset, expected_offset, gaps_below):
            break
        segment.index_batch(header, position, index_interval_bytes)
        expected_offset = header.next_offset
        valid_end = position + header.size
    if valid_end < segment.size:
        segment.truncate_to_position(valid_end)
    segment.write_index_entries()
    return expected_offset


def read_checked_batches(fd: int, size: int) -> Iterator[tuple[int, BatchHeader, memoryview]]:
    """(position, header, bytes) of each batch passing ``iter_batches``, up to the first bad one."""
    position = 0
    while position < size:
        chunk = os.pread(fd, min(READ_CHUNK, size - position), position)
        whole = _whole_batches_length(chunk)
        if whole == 0:
            # the next batch is larger than a chunk, or torn
            if len(chunk) < LOG_OVERHEAD:
                return
            length = peek_offset_and_length(chunk)[1] + LOG_OVERHEAD
            if length < HEADER_SIZE or position + length > size:
                return
            chunk = os.pread(fd, length, position)
            whole = length
        view = memoryview(chunk)[:whole]
        try:
            for header in iter_batches(view):
                yield (
                    position + header.position,
                    header,
                    view[header.position : header.position + header.size],
                )
        except KafkaError:
            return
        position += whole


def _whole_batches_length(chunk: bytes) -> int:
    """Bytes at the start of ``chunk`` taken by batches that lie wholly inside it."""
    end = 0
    while len(chunk) - end >= LOG_OVERHEAD:
        length = peek_offset_and_length(chunk, end)[1] + LOG_OVERHEAD
        if length < HEADER_SIZE or end + length > len(chunk):
            break
        end += length
    return end
