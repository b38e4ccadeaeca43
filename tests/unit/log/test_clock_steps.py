"""A wall clock stepped forward or back by hours: segment ages, flushes and deferred closes
follow the monotonic clock; LogAppendTime and the time index never go back; retention
follows record timestamps against the (stepped) wall clock, as in Kafka."""

from __future__ import annotations

import struct
from pathlib import Path

from batch_builder import NOW_MS, build_batch
from log_testing import FakeClock, OpenLog, read_records

from odradek.broker.log import LogConfig
from odradek.broker.log.checkpoint import read_checkpoint
from odradek.broker.log.partition_log import OFFSETS_CHECKPOINT_FILE, OFFSETS_CHECKPOINT_VERSION
from odradek.broker.log.steady_clock import steady_clock

HOUR = 3600 * 1000
BATCH = build_batch(2)


def recovery_point(directory: Path) -> int:
    rows = read_checkpoint(directory / OFFSETS_CHECKPOINT_FILE, OFFSETS_CHECKPOINT_VERSION)
    assert rows is not None
    return {name: int(value) for name, value in rows}["recovery-point"]


def batch_at(clock: FakeClock) -> bytes:
    """A batch timestamped by the producer at the wall clock's time."""
    return build_batch(2, timestamp=int(clock() * 1000))


def time_index_entries(directory: Path) -> list[tuple[int, int]]:
    """(timestamp, relative offset) entries of every .timeindex file, in offset order."""
    entry = struct.Struct(">qi")
    entries: list[tuple[int, int]] = []
    for path in sorted(directory.glob("*.timeindex")):
        data = path.read_bytes()
        entries += [entry.unpack_from(data, at) for at in range(0, len(data), entry.size)]
    return entries


def test_steady_clock_starts_at_the_wall_time_and_ignores_later_steps() -> None:
    clock = FakeClock()
    steady = steady_clock(clock, clock.monotonic)
    clock.step_ms(3 * HOUR)
    clock.advance_ms(1_500)
    clock.step_ms(-6 * HOUR)

    assert steady() == (NOW_MS + 1_500) / 1000


def test_a_forward_step_does_not_roll_the_active_segment(
    open_log: OpenLog, clock: FakeClock
) -> None:
    log = open_log(LogConfig(segment_ms=HOUR))
    log.append_as_leader(BATCH, leader_epoch=0)
    clock.step_ms(3 * HOUR)
    log.append_as_leader(BATCH, leader_epoch=0)

    assert log.segment_count == 1


def test_a_segment_begun_while_the_clock_was_back_does_not_roll_when_it_returns(
    open_log: OpenLog, clock: FakeClock
) -> None:
    log = open_log(LogConfig(segment_ms=HOUR))
    clock.step_ms(-3 * HOUR)
    log.append_as_leader(batch_at(clock), leader_epoch=0)
    clock.step_ms(3 * HOUR)
    log.append_as_leader(batch_at(clock), leader_epoch=0)
    assert log.segment_count == 1

    clock.advance_ms(HOUR + 1)  # segment.ms of real time has passed
    log.append_as_leader(batch_at(clock), leader_epoch=0)
    assert log.segment_count == 2


def test_flush_ms_is_kept_after_a_backward_step(
    open_log: OpenLog, clock: FakeClock, tmp_path: Path
) -> None:
    log = open_log(LogConfig(flush_ms=1_000))
    log.append_as_leader(BATCH, leader_epoch=0)
    clock.step_ms(-3 * HOUR)
    clock.advance_ms(1_000)
    log.append_as_leader(batch_at(clock), leader_epoch=0)
    log.checkpoint()

    assert recovery_point(tmp_path / "topic-0") == 4


def test_a_forward_step_does_not_close_a_deleted_segments_handles_early(
    open_log: OpenLog, clock: FakeClock
) -> None:
    log = open_log(
        LogConfig(segment_bytes=len(BATCH), retention_bytes=0, file_delete_delay_ms=60_000)
    )
    for _ in range(2):
        log.append_as_leader(BATCH, leader_epoch=0)
    log.high_watermark = log.log_end_offset
    region = log.read(0, 1 << 20).regions[0]
    log.delete_retention_segments()

    clock.step_ms(3 * HOUR)
    log.delete_retention_segments()
    assert not region.file.closed  # a fetch may still be sending from it

    clock.advance_ms(60_000)
    log.delete_retention_segments()
    assert region.file.closed


def test_log_append_time_and_the_time_index_never_go_back_when_the_clock_steps_back(
    open_log: OpenLog, clock: FakeClock, tmp_path: Path
) -> None:
    log = open_log(
        LogConfig(
            message_timestamp_type="LogAppendTime",
            segment_bytes=len(BATCH) * 2,
            index_interval_bytes=0,
        )
    )
    times = []
    for step in (3 * HOUR, 0, -3 * HOUR, 0, 0, -3 * HOUR, 7 * HOUR, 0):
        clock.step_ms(step)
        clock.advance_ms(10)
        times.append(log.append_as_leader(BATCH, leader_epoch=0).log_append_time)
    stored = [record.timestamp for record in read_records(log)]
    log.close()

    ahead = NOW_MS + 3 * HOUR
    assert times == [ahead + 10, ahead + 20, ahead + 20, ahead + 20, ahead + 20, ahead + 20,
                     NOW_MS + 4 * HOUR + 70, NOW_MS + 4 * HOUR + 80]  # fmt: skip
    assert stored == [t for t in times for _ in "ab"]
    stamps = [timestamp for timestamp, _ in time_index_entries(tmp_path / "topic-0")]
    assert len(stamps) >= 3 and stamps == sorted(stamps)


def test_a_backward_step_deletes_nothing_early(open_log: OpenLog, clock: FakeClock) -> None:
    log = open_log(LogConfig(segment_bytes=len(BATCH), retention_ms=HOUR))
    for _ in range(3):
        log.append_as_leader(BATCH, leader_epoch=0)
    log.high_watermark = log.log_end_offset
    clock.step_ms(-3 * HOUR)
    clock.advance_ms(HOUR + 1)

    assert log.delete_retention_segments() == 0


def test_a_forward_step_deletes_what_the_stepped_clock_says_expired(
    open_log: OpenLog, clock: FakeClock
) -> None:
    log = open_log(LogConfig(segment_bytes=len(BATCH), retention_ms=2 * HOUR))
    for timestamp in (NOW_MS - 2 * HOUR, NOW_MS):
        log.append_as_leader(build_batch(2, timestamp=timestamp), leader_epoch=0)
    log.append_as_leader(BATCH, leader_epoch=0)
    log.high_watermark = log.log_end_offset
    clock.step_ms(HOUR)

    log.delete_retention_segments()

    assert log.log_start_offset == 2  # only the records then older than retention.ms
