"""Log compaction: last value per key, offsets kept, tombstones, lag and ratio, safe swaps."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from batch_builder import NOW_MS, KeyValue, keyed_batch
from cleaning import compacted, rows
from hypothesis import given, settings
from hypothesis import strategies as st
from log_testing import FakeClock, OpenLog, abandon, read_batches, region_bytes

from odradek.broker.log import CleanerStats, LogCleaner, LogConfig, LogManager, PartitionLog
from odradek.broker.protocol.compression import CODEC_NAMES
from odradek.broker.protocol.records import CONTROL_MASK, TRANSACTIONAL_MASK, patch_batch

HOUR = 3600 * 1000
OLD = NOW_MS - HOUR  # records written an hour before the tests' "now"
KEYS = [b"k%d" % i for i in range(6)]


def compact_config(segment_bytes: int = 600, **settings: Any) -> LogConfig:
    """A compacted topic's config, cleanable whatever its dirty ratio unless told otherwise."""
    return LogConfig(
        **{
            "segment_bytes": segment_bytes,
            "index_interval_bytes": 100,
            "cleanup_policy": ("compact",),
            "min_cleanable_dirty_ratio": 0.0,
            **settings,
        }
    )


def append_all(log: PartitionLog, batches: list[tuple[list[KeyValue], int]]) -> list[KeyValue]:
    """Append (records, codec) batches written at OLD; commit them; the records in offset order."""
    appended: list[KeyValue] = []
    for items, codec in batches:
        log.append_as_leader(keyed_batch(items, codec=codec, timestamp=OLD), leader_epoch=0)
        appended += items
    log.high_watermark = log.log_end_offset
    return appended


record = st.tuples(st.sampled_from(KEYS), st.none() | st.binary(min_size=1, max_size=30))
batches = st.lists(
    st.tuples(st.lists(record, min_size=1, max_size=6), st.sampled_from(sorted(CODEC_NAMES))),
    min_size=1,
    max_size=25,
)


@settings(max_examples=25)
@given(first=batches, second=batches, drop_tombstones=st.booleans())
def test_cleaning_leaves_the_last_record_of_each_key_at_its_offset(
    first: list[tuple[list[KeyValue], int]],
    second: list[tuple[list[KeyValue], int]],
    drop_tombstones: bool,
) -> None:
    config = compact_config(delete_retention_ms=0 if drop_tombstones else HOUR * 2)
    cleaner = LogCleaner()
    with tempfile.TemporaryDirectory() as tmp:
        log = PartitionLog.open(Path(tmp) / "t-0", config, clock=FakeClock())
        try:
            appended = append_all(log, first)
            cleaner.clean(log, NOW_MS)
            appended += append_all(log, second)
            end = log.log_end_offset
            cleaner.clean(log, NOW_MS)
            cleaned_up_to = log.cleaned_up_to
            after = rows(log)
            abandon(log)  # an unclean restart re-validates the gapped segments
            reopened = PartitionLog.open(Path(tmp) / "t-0", config, clock=FakeClock())
            try:
                assert rows(reopened) == after
                assert reopened.log_end_offset == end
            finally:
                abandon(reopened)
        finally:
            abandon(log)

    assert after == compacted(appended, cleaned_up_to, drop_tombstones)
    assert cleaned_up_to == log.segments[-1].base_offset  # every sealed segment was cleaned


def test_cleaning_rewrites_only_sealed_segments_and_keeps_the_log_end(open_log: OpenLog) -> None:
    log = open_log(compact_config())
    appended = append_all(log, [([(b"a", b"%d" % i), (b"b", b"x" * 40)], 0) for i in range(30)])
    end, active = log.log_end_offset, log.segments[-1]

    stats = LogCleaner().clean(log, NOW_MS)

    assert log.log_end_offset == end and log.segments[-1] is active
    assert rows(log) == compacted(appended, active.base_offset, drop_tombstones=False)
    assert stats.runs == 1 and stats.bytes_reclaimed > 0
    assert stats.records_removed == active.base_offset - 2


def test_cleaned_segments_that_shrank_are_merged_by_the_next_cleaning(open_log: OpenLog) -> None:
    log = open_log(compact_config())
    append_all(log, [([(b"a", b"%d" % i), (b"b", b"x" * 40)], 0) for i in range(30)])
    cleaner = LogCleaner()
    cleaner.clean(log, NOW_MS)
    before = log.segment_count
    append_all(log, [([(b"a", b"%d" % i), (b"b", b"x" * 40)], 0) for i in range(5)])

    cleaner.clean(log, NOW_MS)

    assert log.segment_count < before


def test_a_partly_compacted_batch_keeps_its_offset_span_codec_and_producer_fields(
    open_log: OpenLog,
) -> None:
    log = open_log(compact_config(segment_bytes=300))
    log.append_as_leader(
        keyed_batch(
            [(b"a", b"1"), (b"b", b"1"), (b"a", b"2")],
            codec=3,
            producer_id=4,
            producer_epoch=1,
            base_sequence=0,
            timestamp=OLD,
        ),
        leader_epoch=2,
    )
    log.append_as_leader(keyed_batch([(b"b", b"2")] * 3, timestamp=OLD), leader_epoch=2)
    log.append_as_leader(keyed_batch([(b"c", b"x" * 200)], timestamp=OLD), leader_epoch=2)
    log.high_watermark = log.log_end_offset

    LogCleaner().clean(log, NOW_MS)

    first = read_batches(log, 0)[0]
    assert (first.base_offset, first.last_offset, first.records_count) == (0, 2, 1)
    assert (first.compression, first.producer_id, first.producer_epoch) == (3, 4, 1)
    assert (first.base_sequence, first.last_sequence, first.partition_leader_epoch) == (0, 2, 2)
    assert rows(log)[:2] == [(2, b"a", b"2"), (5, b"b", b"2")]
    # the producer's sequences still follow: its next batch is accepted, a retry is not re-added
    retry = keyed_batch([(b"a", b"3")], producer_id=4, producer_epoch=1, base_sequence=3)
    assert not log.append_as_leader(retry, leader_epoch=2).duplicate
    assert log.append_as_leader(retry, leader_epoch=2).duplicate


def test_control_batches_are_kept_untouched(open_log: OpenLog) -> None:
    log = open_log(compact_config(segment_bytes=300))
    marker = keyed_batch(
        [(b"\0\0\0\1", b"\0\0\0\0\0\0")],
        producer_id=8,
        producer_epoch=0,
        attributes=CONTROL_MASK | TRANSACTIONAL_MASK,
        timestamp=OLD,
    )
    append_all(log, [([(b"a", b"1")], 0)])
    placed = bytearray(marker)
    patch_batch(placed, 0, base_offset=1, leader_epoch=0)
    log.append_as_follower(placed)
    append_all(log, [([(b"a", b"2")], 0), ([(b"z", b"y" * 200)], 0)])

    LogCleaner().clean(log, NOW_MS)

    assert [(h.base_offset, h.is_control) for h in read_batches(log, 0)][:2] == [
        (1, True),
        (2, False),
    ]


def test_tombstones_stay_until_delete_retention_ms_after_their_segment(
    open_log: OpenLog, clock: FakeClock
) -> None:
    config = compact_config(segment_bytes=300, delete_retention_ms=2 * HOUR)
    log = open_log(config)
    append_all(log, [([(b"a", b"1"), (b"b", b"1")], 0), ([(b"a", None)], 0)])
    append_all(log, [([(b"c", b"x" * 200)], 0)])
    cleaner = LogCleaner()

    cleaner.clean(log, NOW_MS)
    assert rows(log)[:2] == [(1, b"b", b"1"), (2, b"a", None)]

    append_all(log, [([(b"d", b"x" * 200)], 0)] * 2)  # new dirty data for another cleaning
    cleaner.clean(log, NOW_MS + HOUR - 1)  # the segment's newest record is from OLD + 1
    assert rows(log)[:2] == [(1, b"b", b"1"), (2, b"a", None)]
    append_all(log, [([(b"d", b"x" * 200)], 0)] * 2)
    cleaner.clean(log, NOW_MS + 2 * HOUR)
    assert rows(log)[:2] == [(1, b"b", b"1"), (3, b"c", b"x" * 200)]


def test_segments_younger_than_min_compaction_lag_stay_dirty(open_log: OpenLog) -> None:
    log = open_log(compact_config(segment_bytes=300, min_compaction_lag_ms=HOUR // 2))
    append_all(log, [([(b"a", b"old" * 60)], 0)] * 3)
    for _ in range(3):
        log.append_as_leader(keyed_batch([(b"a", b"new" * 60)]), leader_epoch=0)
    log.high_watermark = log.log_end_offset

    LogCleaner().clean(log, NOW_MS)

    assert log.cleaned_up_to == 3
    assert [offset for offset, _, _ in rows(log)] == [2, 3, 4, 5]


def test_a_log_below_min_cleanable_dirty_ratio_is_not_cleaned(open_log: OpenLog) -> None:
    log = open_log(compact_config(segment_bytes=300, min_cleanable_dirty_ratio=0.6))
    append_all(log, [([(b"a", b"x" * 150)], 0)] * 4)
    cleaner = LogCleaner()
    assert cleaner.clean(log, NOW_MS).runs == 1  # everything was dirty
    append_all(log, [([(b"a", b"x" * 150)], 0)])

    assert cleaner.plan(log, NOW_MS) is None  # 1 dirty segment against 1 clean one
    append_all(log, [([(b"a", b"x" * 150)], 0)])
    assert cleaner.plan(log, NOW_MS) is not None


def test_only_compacted_logs_are_cleaned(open_log: OpenLog) -> None:
    log = open_log(LogConfig(segment_bytes=300, min_cleanable_dirty_ratio=0.0))
    append_all(log, [([(b"a", b"x" * 150)], 0)] * 4)
    assert LogCleaner().plan(log, NOW_MS) is None


def test_a_cleaning_is_discarded_when_the_log_changed_meanwhile(
    open_log: OpenLog, tmp_path: Path
) -> None:
    log = open_log(compact_config(segment_bytes=300, cleanup_policy=("compact", "delete")))
    append_all(log, [([(b"a", b"x" * 150)], 0)] * 4)
    before = rows(log)
    cleaner = LogCleaner()
    plan = cleaner.plan(log, NOW_MS)
    assert plan is not None
    cleaned = cleaner.write(plan)
    log.advance_log_start_offset(1)  # deletes the first planned segment

    assert cleaner.swap(log, cleaned) == CleanerStats()
    assert rows(log) == before[1:]
    assert not list((tmp_path / "topic-0").glob("*.cleaned"))


def test_a_follower_copies_a_compacted_log_with_its_gaps_and_recovers_it(
    open_log: OpenLog, tmp_path: Path
) -> None:
    leader = open_log(compact_config(), directory=tmp_path / "leader-0")
    appended = append_all(leader, [([(b"a", b"%d" % i), (b"b", b"x" * 40)], 0) for i in range(30)])
    LogCleaner().clean(leader, NOW_MS)
    follower = open_log(LogConfig(segment_bytes=600), directory=tmp_path / "follower-0")

    follower.append_as_follower(region_bytes(leader.read(0, 1 << 30)))
    abandon(follower)
    recovered = open_log(LogConfig(segment_bytes=600), directory=tmp_path / "follower-0")

    assert rows(recovered) == rows(leader)
    assert recovered.log_end_offset == leader.log_end_offset == len(appended)


def test_log_manager_cleans_dirty_compacted_logs_off_the_event_loop(
    tmp_path: Path, clock: FakeClock
) -> None:
    manager = LogManager(tmp_path, clock=clock)
    compacted_log = manager.get_or_create("c", 0, compact_config(segment_bytes=300))
    plain = manager.get_or_create("p", 0, LogConfig(segment_bytes=300))
    for log in (compacted_log, plain):
        append_all(log, [([(b"a", b"x" * 150)], 0)] * 4)

    stats = asyncio.run(manager.clean_once())

    assert stats.runs == 1 and stats.records_removed == 2
    assert manager.cleaner_stats == stats
    assert [offset for offset, _, _ in rows(compacted_log)] == [2, 3]
    assert len(rows(plain)) == 4
    manager.close_all()


def test_the_cleaner_checkpoint_survives_a_clean_restart(open_log: OpenLog) -> None:
    log = open_log(compact_config(segment_bytes=300))
    append_all(log, [([(b"a", b"x" * 150)], 0)] * 4)
    LogCleaner().clean(log, NOW_MS)
    assert log.cleaned_up_to == 3
    log.close()

    assert open_log(compact_config(segment_bytes=300)).cleaned_up_to == 3


def test_a_log_below_the_dirty_ratio_is_cleaned_once_max_compaction_lag_has_passed(
    open_log: OpenLog,
) -> None:
    log = open_log(
        compact_config(segment_bytes=300, min_cleanable_dirty_ratio=0.9, max_compaction_lag_ms=HOUR)
    )
    append_all(log, [([(b"a", b"x" * 150)], 0)] * 4)
    cleaner = LogCleaner()
    assert cleaner.clean(log, NOW_MS).runs == 1
    append_all(log, [([(b"a", b"x" * 150)], 0)] * 2)

    first_dirty_appended_at = NOW_MS  # the fake clock's time when the segment began
    assert cleaner.plan(log, first_dirty_appended_at + HOUR) is None
    assert cleaner.plan(log, first_dirty_appended_at + HOUR + 1) is not None


def test_a_compacted_logs_active_segment_rolls_within_max_compaction_lag(
    open_log: OpenLog, clock: FakeClock
) -> None:
    log = open_log(compact_config(segment_bytes=1 << 20, max_compaction_lag_ms=60_000))
    log.append_as_leader(keyed_batch([(b"a", b"1")]), leader_epoch=0)
    clock.advance_ms(60_001)
    log.append_as_leader(keyed_batch([(b"a", b"2")]), leader_epoch=0)

    assert log.segment_count == 2
