"""Idempotent producers: duplicates answered with their offsets, gaps and stale epochs refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from batch_builder import build_batch
from log_testing import OpenLog, abandon

from odradek.broker.log import AppendInfo, LogConfig, PartitionLog
from odradek.broker.protocol.errors import ErrorCode, KafkaError

PID = 42


def produce(
    log: PartitionLog, sequence: int, count: int = 2, epoch: int = 0, pid: int = PID
) -> AppendInfo:
    return log.append_as_leader(
        build_batch(count, producer_id=pid, producer_epoch=epoch, base_sequence=sequence),
        leader_epoch=0,
    )


def assert_refused(code: ErrorCode, log: PartitionLog, *args: int) -> None:
    end = log.log_end_offset
    with pytest.raises(KafkaError) as error:
        produce(log, *args)
    assert error.value.code == code
    assert log.log_end_offset == end


def test_retried_batch_is_a_duplicate_with_its_original_offsets(open_log: OpenLog) -> None:
    log = open_log()
    produce(log, 0)
    original = produce(log, 2)
    produce(log, 4)

    retry = produce(log, 2)

    assert retry.duplicate
    assert (retry.first_offset, retry.last_offset) == (original.first_offset, original.last_offset)
    assert log.log_end_offset == 6


def test_only_the_last_five_batches_are_remembered(open_log: OpenLog) -> None:
    log = open_log()
    for sequence in range(0, 12, 2):
        produce(log, sequence)

    assert produce(log, 2).duplicate
    assert_refused(ErrorCode.out_of_order_sequence_number, log, 0)


def test_sequence_gap_is_out_of_order(open_log: OpenLog) -> None:
    log = open_log()
    produce(log, 0)
    assert_refused(ErrorCode.out_of_order_sequence_number, log, 3)


def test_unknown_producer_is_taken_at_any_sequence_and_followed_from_there(
    open_log: OpenLog,
) -> None:
    log = open_log()
    produce(log, 5)  # sequences 5 and 6
    assert_refused(ErrorCode.out_of_order_sequence_number, log, 9)
    assert not produce(log, 7).duplicate


def test_older_producer_epoch_is_fenced(open_log: OpenLog) -> None:
    log = open_log()
    produce(log, 0, epoch=3)
    assert_refused(ErrorCode.invalid_producer_epoch, log, 2, 2, 2)


def test_new_producer_epoch_restarts_sequences_at_zero(open_log: OpenLog) -> None:
    log = open_log()
    produce(log, 0, epoch=0)
    produce(log, 2, epoch=0)
    assert_refused(ErrorCode.out_of_order_sequence_number, log, 4, 2, 1)

    assert not produce(log, 0, epoch=1).duplicate
    assert not produce(log, 2, epoch=1).duplicate


def test_sequence_wraps_after_int32_max(open_log: OpenLog) -> None:
    log = open_log()
    near_wrap = build_batch(1, producer_id=PID, producer_epoch=0, base_sequence=2**31 - 2)
    log.append_as_follower(near_wrap)  # replication skips the sequence checks

    assert not produce(log, 2**31 - 1, count=1).duplicate
    assert not produce(log, 0).duplicate


def test_batches_of_one_append_are_checked_in_order(open_log: OpenLog) -> None:
    log = open_log()
    batches = [build_batch(2, producer_id=PID, producer_epoch=0, base_sequence=s) for s in (0, 2)]

    info = log.append_as_leader(b"".join(batches), leader_epoch=0)

    assert (info.first_offset, info.last_offset) == (0, 3)
    gap = build_batch(2, producer_id=PID, producer_epoch=0, base_sequence=9)
    with pytest.raises(KafkaError):
        log.append_as_leader(
            build_batch(2, producer_id=PID, producer_epoch=0, base_sequence=4) + gap, 0
        )
    assert log.log_end_offset == 4
    assert not produce(log, 4).duplicate


def test_producers_are_tracked_independently(open_log: OpenLog) -> None:
    log = open_log()
    produce(log, 0, pid=1)
    produce(log, 0, pid=2)
    assert produce(log, 0, pid=1).duplicate
    assert not produce(log, 2, pid=2).duplicate


def test_non_idempotent_batches_are_never_duplicates(open_log: OpenLog) -> None:
    log = open_log()
    log.append_as_leader(build_batch(2), leader_epoch=0)
    assert not log.append_as_leader(build_batch(2), leader_epoch=0).duplicate
    assert log.log_end_offset == 4


def test_state_survives_a_clean_restart_through_its_snapshot(open_log: OpenLog) -> None:
    log = open_log()
    produce(log, 0)
    produce(log, 2)
    log.close()

    log = open_log()
    assert produce(log, 2).duplicate
    assert_refused(ErrorCode.out_of_order_sequence_number, log, 7)


def test_state_is_rebuilt_from_a_snapshot_plus_the_batches_after_it(open_log: OpenLog) -> None:
    config = LogConfig(segment_bytes=len(build_batch(2, producer_id=PID)) * 3)
    log = open_log(config)
    for sequence in range(0, 8, 2):  # the roll after the third batch takes a snapshot
        produce(log, sequence)
    produce(log, 0, pid=7)
    abandon(log)

    log = open_log(config)
    assert produce(log, 6).duplicate
    assert produce(log, 0, pid=7).duplicate
    assert not produce(log, 8).duplicate


def test_a_corrupt_snapshot_falls_back_to_scanning_the_log(
    open_log: OpenLog, tmp_path: Path
) -> None:
    log = open_log()
    produce(log, 0)
    log.close()
    for snapshot in (tmp_path / "topic-0").glob("*.snapshot"):
        data = bytearray(snapshot.read_bytes())
        data[-1] ^= 0xFF
        snapshot.write_bytes(data)

    assert produce(open_log(), 0).duplicate
