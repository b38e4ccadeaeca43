"""A SIGKILL at any moment of a cleaning leaves the log as before it or as after it."""

from __future__ import annotations

import os
import shutil
import signal
import sys
from pathlib import Path
from types import FrameType

from batch_builder import NOW_MS, keyed_batch
from cleaning import Row, rows
from log_testing import FakeClock, abandon

from odradek.broker.log import LogCleaner, LogConfig, PartitionLog
from odradek.broker.protocol.compression import CODEC_NAMES

CONFIG = LogConfig(
    segment_bytes=700,
    index_interval_bytes=100,
    cleanup_policy=("compact",),
    min_cleanable_dirty_ratio=0.0,
    delete_retention_ms=0,
)
# every call that changes a file or a directory entry: the moments a kill can fall between
MUTATIONS = {os.write, os.fsync, os.ftruncate, os.replace, os.rename, os.unlink}


def build_log(directory: Path) -> None:
    log = PartitionLog.open(directory, CONFIG, clock=FakeClock())
    for i in range(24):
        items = [(b"k%d" % (i * 7 % 9), None if i % 5 == 4 else b"v%d" % i * 9), (b"k%d" % i, b"x")]
        log.append_as_leader(
            keyed_batch(items, codec=i % len(CODEC_NAMES), timestamp=NOW_MS - 9), 0
        )
    log.high_watermark = log.log_end_offset
    log.close()


def contents(directory: Path) -> tuple[list[Row], int]:
    log = PartitionLog.open(directory, CONFIG, clock=FakeClock())
    try:
        return rows(log), log.log_end_offset
    finally:
        abandon(log)


def clean_in_child(directory: Path, kill_at: int, count_file: Path) -> bool:
    """Clean in a forked child that SIGKILLs itself at its ``kill_at``-th file mutation;
    whether it was killed. A child that finishes writes its mutation count to ``count_file``."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            log = PartitionLog.open(directory, CONFIG, clock=FakeClock())
            count = 0

            def kill_at_mutation(frame: FrameType, event: str, arg: object) -> None:
                nonlocal count
                if event == "c_call" and arg in MUTATIONS:
                    count += 1
                    if count == kill_at:
                        os.kill(os.getpid(), signal.SIGKILL)

            sys.setprofile(kill_at_mutation)
            LogCleaner().clean(log, NOW_MS)
            sys.setprofile(None)
            count_file.write_text(str(count))
        finally:
            os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.WIFSIGNALED(status)


def test_a_kill_at_any_file_operation_of_a_cleaning_recovers_to_before_or_after(
    tmp_path: Path,
) -> None:
    source = tmp_path / "source" / "t-0"
    build_log(source)
    before = contents(source)
    count_file = tmp_path / "mutations"
    finished = tmp_path / "finished" / "t-0"
    shutil.copytree(source, finished)
    assert not clean_in_child(finished, 0, count_file)
    after = contents(finished)
    assert after != before and after[1] == before[1]
    mutations = int(count_file.read_text())

    outcomes = set()
    for kill_at in range(1, mutations + 1):
        work = tmp_path / f"kill-{kill_at}" / "t-0"
        shutil.copytree(source, work)
        assert clean_in_child(work, kill_at, count_file)
        found = contents(work)
        assert found in (before, after), f"mixed contents after a kill at mutation {kill_at}"
        outcomes.add(found == after)
        assert not list(work.glob("*.cleaned")) and not (work / "cleaner-swap").exists()
        shutil.rmtree(work.parent)
    assert outcomes == {False, True}
