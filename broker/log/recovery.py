"""Re-validation of segments written before an unclean stop."""

from __future__ import annotations

import logging
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

logger = logging.getLogger(__name__)

READ_CHUNK = 1 << 20


def recover_segment(segment: LogSegment, expected_offset: int, index_interval_bytes: int) -> int:
    """Keep the longest run of valid, contiguous batches, re-index it, return the next offset.

    A batch is valid when its framing and CRC-32C check and its base offset is
    the one expected (baseOffset lies outside the CRC, so contiguity is what
    catches its corruption). Everything after the first invalid batch is cut.
    """
    segment.reset_indexes()
    valid_end = 0
    for position, header in _checked_batches(segment.file.fileno(), segment.size):
        if header.base_offset != expected_offset:
            break
        segment.index_batch(header, position, index_interval_bytes)
        expected_offset = header.next_offset
        valid_end = position + header.size
    if valid_end < segment.size:
        logger.warning(
            "truncating %s from %d to %d bytes: torn or corrupt batch after offset %d",
            segment.log_path,
            segment.size,
            valid_end,
            expected_offset - 1,
        )
        segment.truncate_to_position(valid_end)
    return expected_offset


def _checked_batches(fd: int, size: int) -> Iterator[tuple[int, BatchHeader]]:
    """(position, header) of each batch that passes ``iter_batches``, up to the first bad one."""
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
        try:
            for header in iter_batches(memoryview(chunk)[:whole]):
                yield position + header.position, header
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
