"""Segments roll on segment.bytes and segment.ms; fsync follows flush.messages and flush.ms."""

from __future__ import annotations

from pathlib import Path

from batch_builder import build_batch
from log_testing import FakeClock, OpenLog

from odradek.broker.log import LogConfig
from odradek.broker.log.checkpoint import read_checkpoint
from odradek.broker.log.partition_log import OFFSETS_CHECKPOINT_FILE, OFFSETS_CHECKPOINT_VERSION

BATCH = build_batch(2)


def recovery_point(directory: Path) -> int:
    rows = read_checkpoint(directory / OFFSETS_CHECKPOINT_FILE, OFFSETS_CHECKPOINT_VERSION)
    assert rows is not None
    return {name: int(value) for name, value in rows}["recovery-point"]


def test_segment_rolls_when_the_next_append_would_exceed_segment_bytes(
    open_log: OpenLog, tmp_path: Path
) -> None:
    log = open_log(LogConfig(segment_bytes=len(BATCH) * 3))
    for _ in range(7):
        log.append_as_leader(BATCH, leader_epoch=0)

    assert log.segment_count == 3
    names = sorted(path.name for path in (tmp_path / "topic-0").glob("*.log"))
    assert names == [f"{base:020d}.log" for base in (0, 6, 12)]
    assert log.size_bytes == len(BATCH) * 7


def test_segment_rolls_once_segment_ms_has_passed_since_its_first_append(
    open_log: OpenLog, clock: FakeClock
) -> None:
    log = open_log(LogConfig(segment_ms=60_000))
    log.append_as_leader(BATCH, leader_epoch=0)
    clock.advance_ms(60_000)
    log.append_as_leader(BATCH, leader_epoch=0)
    assert log.segment_count == 1

    clock.advance_ms(1)
    log.append_as_leader(BATCH, leader_epoch=0)
    assert log.segment_count == 2


def test_an_empty_segment_never_rolls_on_time(open_log: OpenLog, clock: FakeClock) -> None:
    log = open_log(LogConfig(segment_ms=10))
    clock.advance_ms(1_000)
    log.append_as_leader(BATCH, leader_epoch=0)
    assert log.segment_count == 1


def test_segment_age_after_restart_counts_from_its_first_batch(
    open_log: OpenLog, clock: FakeClock
) -> None:
    config = LogConfig(segment_ms=60_000)
    log = open_log(config)
    log.append_as_leader(BATCH, leader_epoch=0)  # timestamped at the clock's "now"
    log.close()
    clock.advance_ms(61_000)

    log = open_log(config)
    log.append_as_leader(BATCH, leader_epoch=0)
    assert log.segment_count == 2


def test_roll_flushes_and_advances_the_recovery_point(open_log: OpenLog, tmp_path: Path) -> None:
    log = open_log(LogConfig(segment_bytes=len(BATCH) * 2))
    for _ in range(5):
        log.append_as_leader(BATCH, leader_epoch=0)
    log.checkpoint()

    assert recovery_point(tmp_path / "topic-0") == 8


def test_flush_messages_fsyncs_after_that_many_records(open_log: OpenLog, tmp_path: Path) -> None:
    log = open_log(LogConfig(flush_messages=4))
    log.append_as_leader(BATCH, leader_epoch=0)
    log.checkpoint()
    assert recovery_point(tmp_path / "topic-0") == 0

    log.append_as_leader(BATCH, leader_epoch=0)
    log.checkpoint()
    assert recovery_point(tmp_path / "topic-0") == 4


def test_flush_ms_fsyncs_on_the_first_append_after_that_long(
    open_log: OpenLog, tmp_path: Path, clock: FakeClock
) -> None:
    log = open_log(LogConfig(flush_ms=1_000))
    log.append_as_leader(BATCH, leader_epoch=0)
    log.checkpoint()
    assert recovery_point(tmp_path / "topic-0") == 0

    clock.advance_ms(1_000)
    log.append_as_leader(BATCH, leader_epoch=0)
    log.checkpoint()
    assert recovery_point(tmp_path / "topic-0") == 4


def test_segment_rolls_when_its_offset_index_is_full(open_log: OpenLog) -> None:
    # every batch after a segment's first gets an index entry (interval 0); 3 entries of
    # 8 bytes fill 24 bytes, so a segment takes 4 batches
    log = open_log(LogConfig(index_interval_bytes=0, segment_index_bytes=24))
    for _ in range(9):
        log.append_as_leader(BATCH, leader_epoch=0)

    assert log.segment_count == 3


def test_segment_jitter_rolls_each_segment_up_to_that_much_earlier(
    open_log: OpenLog, clock: FakeClock, tmp_path: Path
) -> None:
    config = LogConfig(segment_ms=60_000, segment_jitter_ms=30_000)
    logs = [open_log(config, tmp_path / f"topic-{i}") for i in range(40)]
    for log in logs:
        log.append_as_leader(BATCH, leader_epoch=0)

    clock.advance_ms(30_000)  # no jitter reaches 30 s: nothing rolls yet
    for log in logs:
        log.append_as_leader(BATCH, leader_epoch=0)
    assert {log.segment_count for log in logs} == {1}

    clock.advance_ms(15_000)  # rolls only where the jitter drawn exceeds 15 s
    for log in logs:
        log.append_as_leader(BATCH, leader_epoch=0)
    rolled = sum(log.segment_count == 2 for log in logs)
    assert 0 < rolled < len(logs)
