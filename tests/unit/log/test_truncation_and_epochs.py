"""Follower truncation and the leader-epoch cache behind OffsetForLeaderEpoch."""

from __future__ import annotations

import pytest
from batch_builder import build_batch
from log_testing import OpenLog, read_batches

from odradek.broker.log import LogConfig, PartitionLog
from odradek.broker.protocol.errors import ErrorCode, KafkaError

SMALL_SEGMENTS = LogConfig(segment_bytes=len(build_batch(2)) * 3, index_interval_bytes=1)


def filled(open_log: OpenLog, epochs: list[int]) -> PartitionLog:
    """A log with one 2-record batch per entry of ``epochs``, appended in that leader epoch."""
    log = open_log(SMALL_SEGMENTS)
    for epoch in epochs:
        log.append_as_leader(build_batch(2), leader_epoch=epoch)
    return log


def test_end_offset_for_epoch_follows_kafka(open_log: OpenLog) -> None:
    log = filled(open_log, [1, 1, 3, 3, 5])  # epoch 1 from 0, 3 from 4, 5 from 8

    assert log.end_offset_for_epoch(1) == (1, 4)
    assert log.end_offset_for_epoch(2) == (1, 4)
    assert log.end_offset_for_epoch(3) == (3, 8)
    assert log.end_offset_for_epoch(5) == (5, 10)
    assert log.end_offset_for_epoch(0) == (0, 0)
    assert log.end_offset_for_epoch(6) == (-1, -1)


def test_a_new_leader_epoch_starts_at_election_and_bounds_the_earlier_ones(
    open_log: OpenLog,
) -> None:
    """A follower whose latest epoch (5) the new leader never wrote learns where
    the leader's history diverges before the leader has appended anything."""
    log = filled(open_log, [1, 1, 3])  # epoch 1 from 0, 3 from 4; log end 6
    assert log.latest_epoch == 3
    log.start_leader_epoch(7)

    assert log.latest_epoch == 7
    assert log.end_offset_for_epoch(5) == (3, 6)
    assert log.end_offset_for_epoch(7) == (7, 6)


def test_empty_log_knows_no_epoch(open_log: OpenLog) -> None:
    assert open_log().end_offset_for_epoch(0) == (-1, -1)


def test_epochs_survive_restart(open_log: OpenLog) -> None:
    filled(open_log, [1, 2]).close()
    assert open_log(SMALL_SEGMENTS).end_offset_for_epoch(1) == (1, 2)


def test_truncate_to_drops_later_batches_segments_and_epochs(open_log: OpenLog) -> None:
    log = filled(open_log, [1, 1, 1, 2, 2, 3, 3, 3])
    log.high_watermark = 16
    assert log.segment_count == 3

    log.truncate_to(8)

    assert log.log_end_offset == 8
    assert log.segment_count == 2
    assert log.high_watermark == 8
    assert [h.base_offset for h in read_batches(log, 0)] == [0, 2, 4, 6]
    assert log.end_offset_for_epoch(2) == (2, 8)
    assert log.end_offset_for_epoch(3) == (-1, -1)
    assert log.append_as_leader(build_batch(2), leader_epoch=4).first_offset == 8


def test_truncate_inside_a_batch_drops_the_whole_batch(open_log: OpenLog) -> None:
    log = filled(open_log, [0, 0, 0])
    log.truncate_to(3)
    assert log.log_end_offset == 2


def test_truncation_survives_restart_and_keeps_indexes_working(open_log: OpenLog) -> None:
    log = filled(open_log, [0] * 8)
    log.truncate_to(10)
    log.close()

    log = open_log(SMALL_SEGMENTS)
    assert log.log_end_offset == 10
    for offset in range(10):
        assert read_batches(log, offset)[0].base_offset == offset - offset % 2


def test_truncation_forgets_producer_batches_beyond_it(open_log: OpenLog) -> None:
    log = open_log(SMALL_SEGMENTS)
    for sequence in range(0, 10, 2):
        log.append_as_leader(
            build_batch(2, producer_id=5, producer_epoch=0, base_sequence=sequence), 0
        )
    log.close()  # leaves a snapshot beyond the truncation point
    log = open_log(SMALL_SEGMENTS)

    log.truncate_to(6)

    retry = log.append_as_leader(
        build_batch(2, producer_id=5, producer_epoch=0, base_sequence=6), 0
    )
    assert not retry.duplicate
    assert retry.first_offset == 6
    again = log.append_as_leader(
        build_batch(2, producer_id=5, producer_epoch=0, base_sequence=2), 0
    )
    assert again.duplicate


def test_truncate_fully_restarts_the_empty_log_at_an_offset(open_log: OpenLog) -> None:
    log = filled(open_log, [1, 1, 1, 1])
    log.append_as_leader(build_batch(2, producer_id=5, producer_epoch=0, base_sequence=0), 1)

    log.truncate_fully_and_start_at(100)

    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (100, 100, 100)
    assert log.segment_count == 1
    assert log.read(100, 1 << 20).regions == ()
    with pytest.raises(KafkaError) as error:
        log.read(0, 1 << 20)
    assert error.value.code == ErrorCode.offset_out_of_range
    assert log.end_offset_for_epoch(1) == (-1, -1)
    fresh = log.append_as_leader(
        build_batch(2, producer_id=5, producer_epoch=0, base_sequence=0), 2
    )
    assert (fresh.first_offset, fresh.duplicate) == (100, False)
    log.close()

    assert open_log(SMALL_SEGMENTS).log_start_offset == 100
