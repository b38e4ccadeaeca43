"""Durability: what survives a killed process, torn tails, corrupt bytes, and clean restarts."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from batch_builder import build_batch
from log_testing import OpenLog, abandon, read_batches, region_bytes, same_batch

from odradek.broker.log import LogConfig

HERE = Path(__file__).parent
SMALL_SEGMENTS = LogConfig(segment_bytes=1500, index_interval_bytes=200)

WRITER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    sys.path.insert(0, {here!r})
    from odradek.broker.log import PartitionLog
    from test_recovery import SMALL_SEGMENTS, writer_batch

    log = PartitionLog.open(Path(sys.argv[1]), SMALL_SEGMENTS)
    for i in range(int(sys.argv[2])):
        info = log.append_as_leader(writer_batch(i), leader_epoch=1)
        print(info.first_offset, info.last_offset, flush=True)
    print("done", flush=True)
    sys.stdin.read()
    """
)


def writer_batch(i: int) -> bytes:
    """The i-th batch the writer subprocess appends."""
    return build_batch(
        1 + i % 3,
        value=b"%d" % i * (i % 40),
        producer_id=9,
        producer_epoch=0,
        base_sequence=sum(1 + j % 3 for j in range(i)),
    )


def append_in_killed_process(directory: Path, count: int, kill_after: int) -> list[int]:
    """Run a writer, SIGKILL it once ``kill_after`` appends returned; their first offsets."""
    script = WRITER.format(here=str(HERE))
    process = subprocess.Popen(
        [sys.executable, "-c", script, str(directory), str(count)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    acknowledged = []
    try:
        for line in process.stdout:
            if line.strip() == "done" or len(acknowledged) == kill_after:
                break
            acknowledged.append(int(line.split()[0]))
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        process.stdout.close()
        assert process.stdin is not None
        process.stdin.close()
    return acknowledged


def test_every_acknowledged_batch_survives_a_sigkill(open_log: OpenLog, tmp_path: Path) -> None:
    acknowledged = append_in_killed_process(tmp_path / "topic-0", count=200, kill_after=150)

    log = open_log(SMALL_SEGMENTS)
    headers = read_batches(log, 0)
    assert len(acknowledged) == 150
    assert [h.base_offset for h in headers][: len(acknowledged)] == acknowledged
    stored = region_bytes(log.read(0, 1 << 30))
    position = 0
    for i, header in enumerate(headers):
        assert same_batch(stored[position : position + header.size], writer_batch(i))
        position += header.size
    assert log.segment_count > 1


def test_producer_state_is_rebuilt_from_the_log_after_a_sigkill(
    open_log: OpenLog, tmp_path: Path
) -> None:
    acknowledged = append_in_killed_process(tmp_path / "topic-0", count=40, kill_after=40)
    log = open_log(SMALL_SEGMENTS)
    last = len(read_batches(log, 0)) - 1

    retry = log.append_as_leader(writer_batch(last), leader_epoch=1)

    assert retry.duplicate
    assert retry.first_offset == acknowledged[last]
    assert not log.append_as_leader(writer_batch(last + 1), leader_epoch=1).duplicate


def fill(open_log: OpenLog, batches: int, config: LogConfig = SMALL_SEGMENTS) -> list[int]:
    """Append ``batches`` batches of 2 records and abandon the log; their base offsets."""
    log = open_log(config)
    bases = [
        log.append_as_leader(build_batch(2), leader_epoch=0).first_offset for _ in range(batches)
    ]
    abandon(log)
    return bases


def last_segment(directory: Path) -> Path:
    return sorted(directory.glob("*.log"))[-1]


def assert_readable_from_every_offset(open_log: OpenLog, end: int) -> None:
    log = open_log(SMALL_SEGMENTS)
    for offset in range(end):
        assert read_batches(log, offset)[0].base_offset == offset - offset % 2


def test_recovery_truncates_torn_tail_to_last_whole_batch(
    open_log: OpenLog, tmp_path: Path
) -> None:
    bases = fill(open_log, 30)
    segment = last_segment(tmp_path / "topic-0")
    os.truncate(segment, segment.stat().st_size - 7)

    log = open_log(SMALL_SEGMENTS)

    assert log.log_end_offset == bases[-1]
    assert [h.base_offset for h in read_batches(log, 0)] == bases[:-1]
    assert log.append_as_leader(build_batch(2), leader_epoch=0).first_offset == bases[-1]
    assert_readable_from_every_offset(open_log, bases[-1] + 2)


def test_recovery_drops_a_last_batch_with_corrupt_bytes(open_log: OpenLog, tmp_path: Path) -> None:
    bases = fill(open_log, 30)
    segment = last_segment(tmp_path / "topic-0")
    data = bytearray(segment.read_bytes())
    data[-3] ^= 0xFF
    segment.write_bytes(data)

    log = open_log(SMALL_SEGMENTS)

    assert log.log_end_offset == bases[-1]
    assert [h.base_offset for h in read_batches(log, 0)] == bases[:-1]


def test_recovery_drops_a_batch_whose_base_offset_breaks_contiguity(
    open_log: OpenLog, tmp_path: Path
) -> None:
    bases = fill(open_log, 30)
    segment = last_segment(tmp_path / "topic-0")
    last_size = len(build_batch(2))
    data = bytearray(segment.read_bytes())
    data[-last_size + 7] ^= 0x01  # baseOffset lies outside the CRC
    segment.write_bytes(data)

    assert open_log(SMALL_SEGMENTS).log_end_offset == bases[-1]


def test_recovery_deletes_segments_after_a_corrupt_one(open_log: OpenLog, tmp_path: Path) -> None:
    bases = fill(open_log, 60)
    segments = sorted((tmp_path / "topic-0").glob("*.log"))
    assert len(segments) >= 3
    # nothing was checkpointed, so recovery starts at the first segment
    data = bytearray(segments[1].read_bytes())
    batch_size = len(build_batch(2))
    data[batch_size * 2 + 40] ^= 0xFF
    segments[1].write_bytes(data)

    log = open_log(SMALL_SEGMENTS)

    expected_end = int(segments[1].stem) + 4
    assert log.log_end_offset == expected_end
    assert log.segment_count == 2
    assert [h.base_offset for h in read_batches(log, 0)] == [b for b in bases if b < expected_end]


def test_recovery_rebuilds_lost_indexes(open_log: OpenLog, tmp_path: Path) -> None:
    bases = fill(open_log, 30)
    for index in (tmp_path / "topic-0").glob("*index"):
        index.unlink()

    assert_readable_from_every_offset(open_log, bases[-1] + 2)


def test_clean_restart_trusts_the_segments_without_revalidating(
    open_log: OpenLog, tmp_path: Path
) -> None:
    log = open_log(SMALL_SEGMENTS)
    for _ in range(10):
        log.append_as_leader(build_batch(2), leader_epoch=0)
    log.close()
    segment = last_segment(tmp_path / "topic-0")
    data = bytearray(segment.read_bytes())
    data[-3] ^= 0xFF  # only a recovery would notice: the CRC no longer matches
    segment.write_bytes(data)

    reopened = open_log(SMALL_SEGMENTS)
    assert reopened.log_end_offset == 20
    abandon(reopened)

    # the marker is consumed on open, so the next (unclean) open validates
    assert open_log(SMALL_SEGMENTS).log_end_offset == 18


def test_unclean_restart_from_a_checkpointed_recovery_point_keeps_earlier_segments(
    open_log: OpenLog, tmp_path: Path
) -> None:
    log = open_log(SMALL_SEGMENTS)
    for _ in range(40):
        log.append_as_leader(build_batch(2), leader_epoch=0)
    log.checkpoint()  # segment rolls flushed, so the recovery point is the active segment's base
    end = log.log_end_offset
    abandon(log)

    reopened = open_log(SMALL_SEGMENTS)
    assert reopened.log_end_offset == end
    assert reopened.segment_count == log.segment_count
    assert_readable_from_every_offset(open_log, end)
