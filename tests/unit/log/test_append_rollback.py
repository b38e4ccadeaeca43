"""Disk faults in appends: a failed append is rolled back to the previous log end, its log
directory goes offline (KAFKA_STORAGE_ERROR, one ERROR line), and a restart serves every
batch written before it, exactly once.

Faults are real I/O errors on real files: RLIMIT_FSIZE makes a write past a size fail
with EFBIG after writing what fits (as a full disk does with ENOSPC), and an index file
replaced by a directory makes the index write fail with EISDIR after the batch itself was
written.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from batch_builder import NOW_MS, build_batch
from log_testing import OpenLog, abandon, read_batches

from odradek.broker.log import LogConfig, LogManager, PartitionLog
from odradek.broker.log import segment as segment_module
from odradek.broker.log.segment import LogSegment
from odradek.broker.protocol.errors import ErrorCode, KafkaError

PRODUCER_ID, EPOCH = 7, 0


def idempotent_batch(sequence: int, count: int = 5) -> bytes:
    return build_batch(
        count,
        value=b"v" * 200,
        producer_id=PRODUCER_ID,
        producer_epoch=EPOCH,
        base_sequence=sequence,
    )


@contextlib.contextmanager
def broken_offset_index(log: PartitionLog) -> Iterator[None]:
    """Make writes of the active segment's offset index fail (EISDIR) until the block ends."""
    path = log.segments[-1].offset_index.path
    content = path.read_bytes()
    path.unlink()
    path.mkdir()
    try:
        yield
    finally:
        path.rmdir()
        path.write_bytes(content)


def storage_error(call: object) -> KafkaError:
    assert callable(call)
    with pytest.raises(KafkaError) as raised:
        call()
    assert raised.value.code == ErrorCode.kafka_storage_error
    return raised.value


def reopened(log: PartitionLog) -> PartitionLog:
    """The log as a restarted broker opens it (no clean shutdown: the directory failed)."""
    log.close()
    return PartitionLog.open(log.directory, log.config)


def test_a_write_cut_short_by_a_full_disk_leaves_the_log_at_its_previous_end(
    open_log: OpenLog, file_size_limit: Callable[[int], AbstractContextManager[None]]
) -> None:
    log = open_log()
    log.append_as_leader(idempotent_batch(0), leader_epoch=0)
    size, end = log.size_bytes, log.log_end_offset
    with file_size_limit(size + 100):  # the next batch is ~1 KiB: a partial write
        error = storage_error(lambda: log.append_as_leader(idempotent_batch(5), leader_epoch=0))
    assert "appending to topic-0 failed" in error.message
    assert log.offline
    assert (log.size_bytes, log.log_end_offset) == (size, end)
    assert log.segments[-1].log_path.stat().st_size == size
    # nothing more is written or read there until a restart
    storage_error(lambda: log.append_as_leader(idempotent_batch(5), leader_epoch=0))
    storage_error(lambda: log.read(0, 1 << 20))

    restarted = reopened(log)
    try:
        assert restarted.log_end_offset == end
        retry = restarted.append_as_leader(idempotent_batch(5), leader_epoch=0)
        assert (retry.first_offset, retry.duplicate) == (end, False)
        again = restarted.append_as_leader(idempotent_batch(5), leader_epoch=0)
        assert (again.first_offset, again.duplicate) == (end, True)
        assert [h.base_offset for h in read_batches(restarted, 0)] == [0, 5]
    finally:
        abandon(restarted)


def test_a_failed_index_write_rolls_back_the_batch_already_written(
    open_log: OpenLog, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(segment_module, "INDEX_WRITE_BATCH", 1)  # each entry written at once
    log = open_log(LogConfig(index_interval_bytes=1))  # every batch after the first is indexed
    log.append_as_leader(idempotent_batch(0), leader_epoch=3)
    size, end = log.size_bytes, log.log_end_offset
    with broken_offset_index(log):
        storage_error(lambda: log.append_as_leader(idempotent_batch(5), leader_epoch=4))
        segment = log.segments[-1]
        assert segment.log_path.stat().st_size == size
        assert (segment.next_offset, len(segment.offset_index)) == (end, 0)
        assert log.latest_epoch == 3  # the new epoch's entry went with its batch
        log.close()

    restarted = PartitionLog.open(log.directory, log.config)
    try:
        assert (restarted.log_end_offset, restarted.latest_epoch) == (end, 3)
        retry = restarted.append_as_leader(idempotent_batch(5), leader_epoch=4)
        assert (retry.first_offset, retry.duplicate) == (end, False)
    finally:
        abandon(restarted)


def segment_state(segment: LogSegment) -> tuple[int, ...]:
    """What a rollback must restore: sizes, next offset, max timestamp, index entries."""
    return (
        segment.size,
        segment.next_offset,
        segment.max_timestamp,
        segment.offset_of_max_timestamp,
        len(segment.offset_index),
        len(segment.time_index),
        segment.offset_index.path.stat().st_size,
        segment.time_index.path.stat().st_size,
    )


def test_rollback_restores_files_and_state_after_a_whole_append(open_log: OpenLog) -> None:
    log = open_log(LogConfig(index_interval_bytes=1))
    for sequence in range(0, 15, 5):
        log.append_as_leader(idempotent_batch(sequence), leader_epoch=0)
    segment = log.segments[-1]
    before = segment_state(segment)
    log.append_as_leader(build_batch(2, timestamp=NOW_MS + 1000), leader_epoch=0)
    segment.rollback(before[0], before[1])
    after = segment_state(segment)
    assert after == before
    assert segment.log_path.stat().st_size == before[0]


def test_a_failed_directory_is_logged_once_and_the_other_directories_keep_serving(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    logs = LogManager(first, second)
    failed_dirs: list[Path] = []
    logs.failures.on_failure(failed_dirs.append)
    logs.load()
    config = LogConfig(index_interval_bytes=1)
    in_first = logs.get_or_create("t", 0, config)  # the least loaded directory, then the other
    in_second = logs.get_or_create("t", 1, config)
    neighbour = logs.get_or_create("t", 2, config)
    assert (in_first.directory.parent, in_second.directory.parent) == (first, second)
    assert neighbour.directory.parent == first
    for log in (in_first, in_second, neighbour):
        log.append_as_leader(build_batch(1), leader_epoch=0)
    monkeypatch.setattr(segment_module, "INDEX_WRITE_BATCH", 1)  # each entry written at once
    try:
        with broken_offset_index(in_first), caplog.at_level(logging.ERROR, "odradek.broker.log"):
            for _ in range(3):
                storage_error(lambda: in_first.append_as_leader(build_batch(1), leader_epoch=0))
            storage_error(lambda: neighbour.append_as_leader(build_batch(1), leader_epoch=0))
            storage_error(lambda: neighbour.read(0, 1 << 20))
        lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]
        assert len(lines) == 1, lines
        assert str(first) in lines[0] and "Is a directory" in lines[0]
        assert failed_dirs == [first]
        assert logs.online_log_dirs == (second,)
        assert in_second.append_as_leader(build_batch(1), leader_epoch=0).first_offset == 1
        assert logs.get_or_create("t", 3, config).directory.parent == second
    finally:
        logs.close_all()
    assert not (first / "t-0" / "clean-shutdown").exists()  # recovered at the next start
    assert (second / "t-1" / "clean-shutdown").exists()
