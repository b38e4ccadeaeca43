"""Retention by time and size, DeleteRecords, and what moves with the log start offset."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from batch_builder import NOW_MS, build_batch
from log_testing import FakeClock, OpenLog, abandon, read_batches, region_bytes

from odradek.broker.log import FileRegion, LogConfig, LogManager, PartitionLog, ReadResult
from odradek.broker.protocol.errors import ErrorCode, KafkaError

BATCH = len(build_batch(2))
HOUR = 3600 * 1000


def filled(open_log: OpenLog, config: LogConfig, timestamps: list[int]) -> PartitionLog:
    """A log with one 2-record batch per timestamp, three batches a segment, all committed."""
    log = open_log(config)
    for timestamp in timestamps:
        log.append_as_leader(build_batch(2, timestamp=timestamp), leader_epoch=0)
    log.high_watermark = log.log_end_offset
    return log


def small(**settings: Any) -> LogConfig:
    return LogConfig(segment_bytes=BATCH * 3, **settings)


def test_time_retention_deletes_segments_whose_newest_record_is_too_old(
    open_log: OpenLog,
) -> None:
    old, recent = NOW_MS - 3 * HOUR, NOW_MS - HOUR // 2
    log = filled(open_log, small(retention_ms=HOUR), [old] * 6 + [recent] + [old] * 2 + [recent])

    deleted = log.delete_retention_segments(NOW_MS)

    assert deleted == BATCH * 6
    assert log.log_start_offset == 12
    assert [h.base_offset for h in read_batches(log, 12)] == [12, 14, 16, 18]
    with pytest.raises(KafkaError) as error:
        log.read(11, 1 << 20)
    assert error.value.code == ErrorCode.offset_out_of_range


def test_size_retention_keeps_at_least_retention_bytes(open_log: OpenLog) -> None:
    log = filled(open_log, small(retention_bytes=BATCH * 4), [NOW_MS] * 10)

    assert log.delete_retention_segments(NOW_MS) == BATCH * 6
    assert log.size_bytes == BATCH * 4
    assert log.segment_count == 2
    assert log.log_start_offset == 12


def test_retention_applies_only_with_cleanup_policy_delete(open_log: OpenLog) -> None:
    log = filled(
        open_log, small(retention_ms=0, retention_bytes=0, cleanup_policy=("compact",)), [1] * 7
    )
    assert log.delete_retention_segments(NOW_MS) == 0
    assert log.log_start_offset == 0


def test_retention_never_deletes_above_the_high_watermark(open_log: OpenLog) -> None:
    log = filled(open_log, small(retention_ms=0), [1] * 7)
    log.high_watermark = 7

    log.delete_retention_segments(NOW_MS)

    assert log.log_start_offset == 6  # the second segment ends at 12, above the watermark


def test_an_expired_active_segment_is_rolled_and_deleted(open_log: OpenLog) -> None:
    log = filled(open_log, small(retention_ms=HOUR), [1] * 5)

    log.delete_retention_segments(NOW_MS)

    assert (log.log_start_offset, log.log_end_offset, log.size_bytes) == (10, 10, 0)
    assert log.append_as_leader(build_batch(1), leader_epoch=0).first_offset == 10


def test_the_log_start_offset_survives_a_restart(open_log: OpenLog) -> None:
    log = filled(open_log, small(retention_bytes=BATCH), [NOW_MS] * 7)
    log.delete_retention_segments(NOW_MS)
    log.close()

    reopened = open_log(small())
    assert (reopened.log_start_offset, reopened.log_end_offset) == (12, 14)


def test_deleted_segments_stay_readable_through_open_handles_until_the_delay(
    open_log: OpenLog, tmp_path: Path, clock: FakeClock
) -> None:
    log = filled(open_log, small(retention_bytes=0, file_delete_delay_ms=1000), [NOW_MS] * 4)
    region = log.read(0, 1 << 20).regions[0]
    sent = region_bytes(log.read(0, 1 << 20))[: region.length]

    log.delete_retention_segments(NOW_MS)

    assert not (tmp_path / "topic-0" / "00000000000000000000.log").exists()
    assert region_bytes_of(region) == sent  # a fetch response still sending it completes
    clock.advance_ms(1000)
    log.delete_retention_segments(NOW_MS + 1000)
    assert region.file.closed


def region_bytes_of(region: FileRegion) -> bytes:
    return region_bytes(ReadResult((region,), region.length, 0, 0))


def test_advance_log_start_offset_hides_and_deletes_what_lies_below(open_log: OpenLog) -> None:
    log = filled(open_log, small(), [NOW_MS] * 7)

    log.advance_log_start_offset(7)

    assert log.log_start_offset == 7
    assert log.segment_count == 2  # the segment holding 6..11 stays
    assert [h.base_offset for h in read_batches(log, 7)] == [6, 8, 10, 12]
    with pytest.raises(KafkaError) as error:
        log.read(6, 1 << 20)
    assert error.value.code == ErrorCode.offset_out_of_range
    log.advance_log_start_offset(3)  # never backwards
    assert log.log_start_offset == 7


@pytest.mark.parametrize("offset", [-1, 15])
def test_advance_log_start_offset_beyond_the_high_watermark_is_out_of_range(
    open_log: OpenLog, offset: int
) -> None:
    log = filled(open_log, small(), [NOW_MS] * 7)
    with pytest.raises(KafkaError) as error:
        log.advance_log_start_offset(offset)
    assert error.value.code == ErrorCode.offset_out_of_range


def test_advance_to_the_log_end_leaves_an_empty_log_that_continues(open_log: OpenLog) -> None:
    log = filled(open_log, small(), [NOW_MS] * 4)

    log.advance_log_start_offset(8)

    assert (log.log_start_offset, log.size_bytes) == (8, 0)
    assert log.read(8, 1 << 20).regions == ()
    assert log.append_as_leader(build_batch(1), leader_epoch=0).first_offset == 8


def test_leader_epochs_and_producer_snapshots_below_the_start_are_forgotten(
    open_log: OpenLog, tmp_path: Path
) -> None:
    log = open_log(small(retention_bytes=BATCH))
    for epoch in range(4):
        log.append_as_leader(
            build_batch(2, producer_id=5, producer_epoch=0, base_sequence=2 * epoch), epoch
        )
    log.high_watermark = log.log_end_offset

    log.delete_retention_segments(NOW_MS)

    assert log.log_start_offset == 6
    assert [(e.epoch, e.start_offset) for e in log._epoch_cache.entries] == [(3, 6)]
    assert all(int(p.stem) >= 6 for p in (tmp_path / "topic-0").glob("*.snapshot"))
    assert log.end_offset_for_epoch(1) == (1, 6)  # below the first known epoch


def test_log_manager_enforces_retention_in_every_log(tmp_path: Path, clock: FakeClock) -> None:
    manager = LogManager(tmp_path, clock=clock)
    for partition in range(2):
        log = manager.get_or_create("t", partition, small(retention_ms=HOUR))
        for _ in range(4):
            log.append_as_leader(build_batch(2, timestamp=1), leader_epoch=0)
        log.high_watermark = log.log_end_offset

    assert manager.enforce_retention() == 2 * 4 * BATCH
    assert all(log.log_start_offset == 8 for _, _, log in manager.partitions())
    manager.close_all()


def test_a_producer_whose_batches_retention_deleted_continues_its_sequence(
    open_log: OpenLog,
) -> None:
    log = open_log(small(retention_ms=HOUR))
    for seq in range(0, 8, 2):
        log.append_as_leader(build_batch(2, timestamp=1, producer_id=3, producer_epoch=0,
                                         base_sequence=seq), leader_epoch=0)  # fmt: skip
    log.high_watermark = log.log_end_offset
    log.delete_retention_segments(NOW_MS)
    assert log.size_bytes == 0

    following = build_batch(2, producer_id=3, producer_epoch=0, base_sequence=8)
    assert log.append_as_leader(following, leader_epoch=0).first_offset == 8
    abandon(log)
    reopened = open_log(small(retention_ms=HOUR))
    assert reopened.append_as_leader(following, leader_epoch=0).duplicate
