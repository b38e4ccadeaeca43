"""A log holds one file descriptor per segment, as Kafka does (its indexes are mmapped):
10,000 partitions need 10,000 descriptors, not four times as many."""

from __future__ import annotations

import os

from batch_builder import build_batch
from log_testing import OpenLog, read_batches

from odradek.broker.log import LogConfig


def open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def test_a_log_holds_one_descriptor_per_segment_and_its_indexes_none(open_log: OpenLog) -> None:
    before = open_descriptors()
    # an index entry for every batch after the first; a new segment every few batches
    config = LogConfig(segment_bytes=4096, index_interval_bytes=1)
    log = open_log(config)
    for _ in range(40):
        log.append_as_leader(build_batch(3, value=b"v" * 300), leader_epoch=0)
    assert len(log.segments) > 5
    assert open_descriptors() - before == len(log.segments)
    assert all(len(segment.offset_index) > 0 for segment in log.segments[:-1])

    log.close()
    reopened = open_log(config)
    assert [h.base_offset for h in read_batches(reopened, 0)] == list(range(0, 120, 3))
    assert all(len(segment.offset_index) > 0 for segment in reopened.segments[:-1])
    assert open_descriptors() - before == len(reopened.segments)
