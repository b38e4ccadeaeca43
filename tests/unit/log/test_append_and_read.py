"""PartitionLog appends as leader and follower, and reads of whole batches."""

from __future__ import annotations

import os
import socket
import tempfile
from pathlib import Path

import pytest
from batch_builder import build_batch
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatchBuilder
from log_testing import FakeClock, OpenLog, abandon, read_batches, region_bytes, same_batch

from odradek.broker.log import FileRegion, LogConfig, PartitionLog
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.records import iter_batches


def test_leader_append_assigns_offsets_from_log_end_and_patches_the_batches(
    open_log: OpenLog,
) -> None:
    log = open_log()
    first = log.append_as_leader(build_batch(3), leader_epoch=4)
    second = log.append_as_leader(build_batch(2), leader_epoch=4)

    assert (first.first_offset, first.last_offset, first.duplicate) == (0, 2, False)
    assert (second.first_offset, second.last_offset) == (3, 4)
    assert (first.log_append_time, first.log_start_offset) == (-1, 0)
    assert log.log_end_offset == 5
    headers = read_batches(log, 0)
    assert [(h.base_offset, h.partition_leader_epoch) for h in headers] == [(0, 4), (3, 4)]


def test_leader_append_stores_the_batch_bytes_unchanged_apart_from_offset_and_epoch(
    open_log: OpenLog,
) -> None:
    log = open_log()
    sent = build_batch(5, compression=DefaultRecordBatchBuilder.CODEC_GZIP)
    log.append_as_leader(build_batch(1), leader_epoch=0)
    log.append_as_leader(sent, leader_epoch=0)

    stored = region_bytes(log.read(1, 1 << 20))
    assert same_batch(stored, sent)


def test_append_of_several_batches_assigns_contiguous_offsets(open_log: OpenLog) -> None:
    log = open_log()
    info = log.append_as_leader(build_batch(2) + build_batch(3) + build_batch(1), leader_epoch=0)

    assert (info.first_offset, info.last_offset) == (0, 5)
    assert [h.base_offset for h in read_batches(log, 0)] == [0, 2, 5]


@pytest.mark.parametrize(
    "records",
    [
        build_batch(2)[:-1],
        build_batch(2) + build_batch(1)[:30],
        build_batch(2)[:-1] + b"\xff",
    ],
    ids=["truncated", "trailing-partial-batch", "bad-crc"],
)
def test_leader_append_rejects_corrupt_records_and_writes_nothing(
    open_log: OpenLog, records: bytes
) -> None:
    log = open_log()
    log.append_as_leader(build_batch(1), leader_epoch=0)

    with pytest.raises(KafkaError) as error:
        log.append_as_leader(build_batch(1) + records, leader_epoch=0)

    assert error.value.code == ErrorCode.corrupt_message
    assert log.log_end_offset == 1
    assert log.size_bytes == len(build_batch(1))


def test_append_without_batches_is_rejected(open_log: OpenLog) -> None:
    with pytest.raises(KafkaError) as error:
        open_log().append_as_leader(b"", leader_epoch=0)
    assert error.value.code == ErrorCode.corrupt_message


def test_append_larger_than_a_segment_is_rejected(open_log: OpenLog) -> None:
    log = open_log(LogConfig(segment_bytes=200))

    with pytest.raises(KafkaError) as error:
        log.append_as_leader(build_batch(1, value=b"x" * 300), leader_epoch=0)

    assert error.value.code == ErrorCode.record_list_too_large


def test_read_from_inside_a_batch_returns_that_whole_batch(open_log: OpenLog) -> None:
    log = open_log()
    log.append_as_leader(build_batch(5), leader_epoch=0)
    log.append_as_leader(build_batch(5), leader_epoch=0)

    assert [h.base_offset for h in read_batches(log, 7)] == [5]
    assert [h.base_offset for h in read_batches(log, 3)] == [0, 5]


def test_read_stops_before_the_batch_at_max_offset(open_log: OpenLog) -> None:
    log = open_log()
    for _ in range(3):
        log.append_as_leader(build_batch(2), leader_epoch=0)

    result = log.read(0, 1 << 20, max_offset=4)
    assert [h.base_offset for h in iter_batches(region_bytes(result))] == [0, 2]
    assert log.read(4, 1 << 20, max_offset=4).regions == ()
    # a batch that straddles max_offset is returned: only its base offset counts
    assert [h.base_offset for h in iter_batches(region_bytes(log.read(0, 1 << 20, 3)))] == [0, 2]


def test_read_returns_the_first_batch_even_when_larger_than_max_bytes(open_log: OpenLog) -> None:
    log = open_log()
    big = build_batch(1, value=b"x" * 500)
    log.append_as_leader(big, leader_epoch=0)
    log.append_as_leader(build_batch(1), leader_epoch=0)

    result = log.read(0, 10)
    assert result.size == len(big)
    assert [h.base_offset for h in iter_batches(region_bytes(result))] == [0]
    assert log.read(0, 10, min_one_batch=False).regions == ()


def test_read_keeps_within_max_bytes_in_whole_batches(open_log: OpenLog) -> None:
    log = open_log()
    batch = build_batch(1)
    for _ in range(10):
        log.append_as_leader(batch, leader_epoch=0)

    result = log.read(0, len(batch) * 3 + len(batch) // 2)
    assert result.size == len(batch) * 3
    assert [h.base_offset for h in iter_batches(region_bytes(result))] == [0, 1, 2]


def test_read_spans_segments_with_one_region_per_segment(open_log: OpenLog) -> None:
    batch = build_batch(1)
    log = open_log(LogConfig(segment_bytes=len(batch) * 2))
    for _ in range(6):
        log.append_as_leader(batch, leader_epoch=0)

    result = log.read(1, 1 << 20)
    assert log.segment_count == 3
    assert len(result.regions) == 3
    assert [h.base_offset for h in iter_batches(region_bytes(result))] == [1, 2, 3, 4, 5]
    assert (result.log_start_offset, result.log_end_offset) == (0, 6)


def test_read_at_log_end_is_empty_and_beyond_it_is_out_of_range(open_log: OpenLog) -> None:
    log = open_log()
    log.append_as_leader(build_batch(2), leader_epoch=0)

    assert log.read(2, 1 << 20).regions == ()
    for offset in (3, -1):
        with pytest.raises(KafkaError) as error:
            log.read(offset, 1 << 20)
        assert error.value.code == ErrorCode.offset_out_of_range


def test_read_regions_can_be_sent_with_sendfile(open_log: OpenLog) -> None:
    log = open_log()
    sent = build_batch(3, value=b"payload")
    log.append_as_leader(sent, leader_epoch=0)
    region = log.read(0, 1 << 20).regions[0]

    left, right = socket.socketpair()
    with left, right:
        os.sendfile(left.fileno(), region.file.fileno(), region.position, region.length)
        received = right.recv(1 << 16)
    assert same_batch(received, sent)


def test_follower_append_keeps_leader_offsets_and_requires_contiguity(
    open_log: OpenLog, tmp_path: Path
) -> None:
    leader = open_log(directory=tmp_path / "leader-0")
    leader.append_as_leader(build_batch(2), leader_epoch=1)
    leader.append_as_leader(build_batch(3), leader_epoch=2)
    follower = open_log(directory=tmp_path / "follower-0")

    info = follower.append_as_follower(region_bytes(leader.read(0, 1 << 20)))

    assert (info.first_offset, info.last_offset, follower.log_end_offset) == (0, 4, 5)
    assert region_bytes(follower.read(0, 1 << 20)) == region_bytes(leader.read(0, 1 << 20))
    assert follower.end_offset_for_epoch(1) == (1, 2)
    with pytest.raises(KafkaError) as error:
        follower.append_as_follower(region_bytes(leader.read(2, 1 << 20)))
    assert error.value.code == ErrorCode.offset_out_of_range


def test_high_watermark_is_clamped_to_the_log_and_survives_restart(open_log: OpenLog) -> None:
    log = open_log()
    log.append_as_leader(build_batch(5), leader_epoch=0)

    log.high_watermark = 99
    assert log.high_watermark == 5
    log.high_watermark = -3
    assert log.high_watermark == 0
    log.high_watermark = 3
    log.close()

    assert open_log().high_watermark == 3


def test_append_does_not_move_the_high_watermark(open_log: OpenLog) -> None:
    log = open_log()
    log.append_as_leader(build_batch(5), leader_epoch=0)
    assert log.high_watermark == 0


def test_offset_for_timestamp_finds_the_first_record_reaching_it(open_log: OpenLog) -> None:
    log = open_log(LogConfig(index_interval_bytes=1))
    for timestamp in (100, 300, 200, 400, 400, 500):
        log.append_as_leader(build_batch(2, timestamp=timestamp), leader_epoch=0)

    # batch i holds offsets 2i, 2i+1 with timestamps t and t+1
    assert log.offset_for_timestamp(0) == (0, 100)
    assert log.offset_for_timestamp(150) == (2, 300)
    assert log.offset_for_timestamp(301) == (3, 301)
    assert log.offset_for_timestamp(302) == (6, 400)
    assert log.offset_for_timestamp(501) == (11, 501)
    assert log.offset_for_timestamp(502) is None
    assert log.max_timestamp() == (501, 11)


def test_timestamps_are_found_after_a_clean_restart(open_log: OpenLog) -> None:
    batch = build_batch(1, timestamp=10)
    log = open_log(LogConfig(segment_bytes=len(batch) * 3, index_interval_bytes=1))
    for timestamp in range(10, 100, 10):
        log.append_as_leader(build_batch(1, timestamp=timestamp), leader_epoch=0)
    log.close()

    log = open_log(LogConfig(segment_bytes=len(batch) * 3, index_interval_bytes=1))
    assert log.segment_count == 3
    assert log.offset_for_timestamp(45) == (4, 50)
    assert log.max_timestamp() == (90, 8)


def test_empty_log_has_no_timestamps(open_log: OpenLog) -> None:
    log = open_log()
    assert log.max_timestamp() == (-1, -1)
    assert log.offset_for_timestamp(0) is None


batch_shapes = st.lists(st.tuples(st.integers(1, 4), st.integers(0, 120)), min_size=1, max_size=25)


@settings(max_examples=60)
@given(
    shapes=batch_shapes,
    segment_batches=st.integers(1, 6),
    index_interval=st.integers(0, 400),
    data=st.data(),
)
def test_read_from_any_offset_returns_the_batch_holding_it_and_all_later_ones(
    shapes: list[tuple[int, int]], segment_batches: int, index_interval: int, data: st.DataObject
) -> None:
    batches = [build_batch(count, value=b"v" * size) for count, size in shapes]
    config = LogConfig(
        segment_bytes=max(len(b) for b in batches) * segment_batches,
        index_interval_bytes=index_interval,
    )
    with tempfile.TemporaryDirectory() as tmp:
        log = PartitionLog.open(Path(tmp) / "t-0", config, clock=FakeClock())
        try:  # hypothesis may stop an example inside data.draw
            starts = [log.append_as_leader(b, leader_epoch=0).first_offset for b in batches]
            offset = data.draw(st.integers(0, log.log_end_offset), label="offset")
            max_bytes = data.draw(st.integers(1, sum(map(len, batches))), label="max_bytes")
            everything = region_bytes(log.read(offset, 1 << 30))
            bounded = log.read(offset, max_bytes)
            bounded_bytes = region_bytes(bounded)
        finally:
            abandon(log)

    first = max((i for i, start in enumerate(starts) if start <= offset), default=0)

    expected = batches[first:] if offset < starts[-1] + shapes[-1][0] else []
    got = list(iter_batches(everything))
    assert [h.base_offset for h in got] == starts[len(batches) - len(expected) :]
    position = 0
    for header, sent in zip(got, expected, strict=True):
        assert same_batch(everything[position : position + header.size], sent)
        position += header.size
    # a bounded read is a prefix of whole batches, at least one of them
    assert everything.startswith(bounded_bytes)
    sizes = [len(b) for b in expected]
    fitting = 0
    while fitting < len(sizes) and sum(sizes[: fitting + 1]) <= max_bytes:
        fitting += 1
    assert bounded.size == sum(sizes[: max(fitting, 1 if sizes else 0)])


@given(length=st.integers(0, 5000), block=st.integers(1, 1500), offset=st.integers(0, 100))
@settings(max_examples=50)
def test_a_region_in_blocks_covers_it_in_order(length: int, block: int, offset: int) -> None:
    with tempfile.TemporaryFile(buffering=0) as file:
        file.write(os.urandom(offset + length))
        region = FileRegion(file, offset, length)
        blocks = list(region.blocks(block))
        assert all(0 < part.length <= block for part in blocks)
        assert b"".join(part.read() for part in blocks) == region.read()
