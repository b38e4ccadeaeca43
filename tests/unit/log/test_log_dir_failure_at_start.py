"""A log directory that fails while the logs load goes offline, as Kafka's LogManager
takes it offline at start-up: one ERROR line names it and the cause, none of its logs stay
open, the other directories load and take the new replicas, and a replica assigned before
the start gets no empty log elsewhere (its log may be in the offline directory).

The faults are real ``OSError``s on real files: a segment file that is a directory
(EISDIR when it is opened) and a log directory path that is a regular file.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from batch_builder import build_batch
from log_testing import FakeClock

from odradek.broker.log import LogConfig, LogManager
from odradek.broker.protocol.errors import ErrorCode, KafkaError

SEGMENT = "00000000000000000000.log"


def offline_errors(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]


def test_a_log_dir_whose_logs_fail_to_load_goes_offline_and_the_others_load(
    tmp_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    before = LogManager(a, b, clock=clock)
    before.load()
    for partition, log_dir in [(0, a), (1, b), (2, b)]:
        before.prefer_log_dir("t", partition, log_dir)
        before.get_or_create("t", partition, LogConfig()).append_as_leader(build_batch(3), 0)
    before.close_all()
    broken = b / "t-2" / SEGMENT  # t-1 loads first, then t-2 fails
    broken.unlink()
    broken.mkdir()

    manager = LogManager(a, b, clock=clock)
    with caplog.at_level(logging.ERROR):
        manager.load()
    try:
        assert manager.online_log_dirs == (a,)
        [error] = offline_errors(caplog)
        assert error.startswith(f"log directory {b} is offline: loading its logs failed: ")
        assert "Is a directory" in error
        assert manager.get("t", 0) is not None and manager.get("t", 0).log_end_offset == 3
        assert manager.get("t", 1) is None and manager.get("t", 2) is None
        with pytest.raises(KafkaError) as refused:
            manager.get_or_create("t", 1, LogConfig(), new=False)
        assert refused.value.code == ErrorCode.kafka_storage_error
        assert not (a / "t-1").exists()
        manager.get_or_create("u", 0, LogConfig())  # a new replica: to the online directory
        assert manager.log_dir_of("u", 0) == a
    finally:
        manager.close_all()
    assert not (b / "t-1" / "clean-shutdown").exists()  # its next start recovers it


def test_a_log_dir_path_that_is_a_file_goes_offline_and_so_does_the_broker_with_no_other(
    tmp_path: Path, clock: FakeClock, caplog: pytest.LogCaptureFixture
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    b.write_text("not a directory")
    manager = LogManager(a, b, clock=clock)
    with caplog.at_level(logging.ERROR):
        manager.load()
    assert manager.online_log_dirs == (a,)
    [error] = offline_errors(caplog)
    assert f"log directory {b} is offline" in error and "File exists" in error

    alone = LogManager(b, clock=clock)
    alone.load()
    assert alone.online_log_dirs == ()
    with pytest.raises(KafkaError) as refused:
        alone.get_or_create("t", 0, LogConfig())
    assert refused.value.code == ErrorCode.kafka_storage_error
