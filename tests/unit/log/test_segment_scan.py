"""A segment's scans read blocks of the file, not a header at a time: every batch is found
whatever the blocks cut through, and an invalid batch stops the scan where it lies."""

from __future__ import annotations

from pathlib import Path

import pytest
from batch_builder import build_batch
from log_testing import OpenLog

from odradek.broker.log.segment import SCAN_BLOCK_MIN
from odradek.broker.protocol.errors import KafkaError
from odradek.broker.protocol.records import iter_batches

# small batches, then some larger than the first block and than the second
SIZES = [1] * 60 + [40, 300, 1] * 4 + [2000] + [1] * 30


def _fill(open_log: OpenLog) -> Path:
    log = open_log()
    for count in SIZES:
        log.append_as_leader(build_batch(count, value=b"v" * 20), leader_epoch=1)
    return log.directory / "00000000000000000000.log"


def test_a_scan_finds_every_batch_where_the_file_holds_it(open_log: OpenLog) -> None:
    path = _fill(open_log)
    data = path.read_bytes()
    expected = [(header.position, header.base_offset) for header in iter_batches(data)]
    assert len(data) > 8 * SCAN_BLOCK_MIN  # the scan needs several growing blocks

    segment = open_log()._segments[0]
    found = list(segment.headers_from(0))

    assert [(position, header.base_offset) for position, header in found] == expected
    assert all(header.position == position for position, header in found)
    middle = expected[len(expected) // 2]
    assert next(segment.headers_from(middle[0]))[1].base_offset == middle[1]


def test_a_scan_stops_with_an_error_at_an_invalid_batch(open_log: OpenLog) -> None:
    path = _fill(open_log)
    data = bytearray(path.read_bytes())
    positions = [header.position for header in iter_batches(bytes(data))]
    broken = next(position for position in positions if position > 2 * SCAN_BLOCK_MIN)
    data[broken + 16] = 1  # magic 1: not a v2 batch
    segment = open_log()._segments[0]
    path.write_bytes(data)

    scanned = []
    with pytest.raises(KafkaError, match=f"no valid batch at {broken}"):
        for position, _ in segment.headers_from(0):
            scanned.append(position)
    assert scanned == [position for position in positions if position < broken]
