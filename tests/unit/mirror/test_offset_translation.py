from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from odradek.mirror.offset_translation import OffsetMap, OffsetMaps, OffsetRun


def test_a_steady_stream_is_one_run_and_translates_exactly() -> None:
    offsets = OffsetMap()
    for source in range(100, 200):
        offsets.record(source, source - 100)
    assert len(offsets.runs) == 1
    assert offsets.translate(150) == 50
    assert offsets.translate(200) == 100  # everything read: resume after the last copy
    assert offsets.translate(100) is None  # before anything this map knows


def test_a_commit_past_what_was_mirrored_resumes_after_the_last_copy() -> None:
    offsets = OffsetMap()
    for source in range(10):
        offsets.record(source, source)
    assert offsets.translate(500) == 10


def test_a_source_gap_does_not_make_the_consumer_skip_records() -> None:
    offsets = OffsetMap()
    for source in (0, 1, 2, 10, 11):  # 3..9: transaction markers or compacted away
        offsets.record(source, len(offsets.runs) and offsets.runs[-1].target_end + 1)
    assert [offsets.translate(c) for c in (3, 5, 10, 11, 12)] == [3, 3, 3, 4, 5]


def test_records_mirrored_again_after_a_restart_translate_to_their_newest_copies() -> None:
    offsets = OffsetMap()
    for source in range(10):
        offsets.record(source, source)
    for source in range(5, 12):  # restart from the committed offset 5: 5..9 twice
        offsets.record(source, source + 5)
    assert offsets.translate(3) == 3
    assert offsets.translate(8) == 13
    assert offsets.translate(12) == 17


def test_the_number_of_runs_is_bounded() -> None:
    offsets = OffsetMap(max_runs=3)
    for source in range(0, 20, 2):
        offsets.record(source, source // 2)
    assert len(offsets.runs) == 3 and offsets.translate(19) == 10


def test_a_restored_run_seeds_only_a_partition_this_process_has_not_mirrored() -> None:
    maps = OffsetMaps()
    maps.restore(("orders", 0), OffsetRun(0, 99, 1000))
    maps.record(("orders", 1), 5, 5)
    maps.restore(("orders", 1), OffsetRun(0, 99, 1000))
    assert maps.translate(("orders", 0), 50) == 1050
    assert maps.translate(("orders", 1), 6) == 6
    assert set(maps.latest()) == {("orders", 0), ("orders", 1)}


@st.composite
def mirror_histories(draw: st.DrawFn) -> list[int]:
    """Source offsets in the order a mirror sends them: a log with gaps, restarts that resend."""
    log = sorted(set(draw(st.lists(st.integers(0, 200), min_size=1, max_size=60))))
    sent: list[int] = []
    index = 0
    for _ in range(draw(st.integers(1, 5))):
        stop = draw(st.integers(index, len(log)))
        sent += log[index:stop]
        index = draw(st.integers(max(0, stop - 10), stop))  # restart from an older commit
    return sent or log[:1]


@given(history=mirror_histories(), data=st.data())
def test_resuming_at_a_translated_offset_misses_no_record(
    history: list[int], data: st.DataObject
) -> None:
    """Translated mid-stream; checked against the target once the mirror has caught up."""
    offsets = OffsetMap()
    for target_offset, source_offset in enumerate(history):
        offsets.record(source_offset, target_offset)
    catch_up = [s for s in sorted(set(history)) if s > history[-1]]
    target = list(enumerate(history + catch_up))  # (target offset, source offset)
    committed = data.draw(st.integers(0, max(history) + 3))
    resume = offsets.translate(committed)
    if resume is None:
        assert committed <= offsets.runs[0].source_start
        return
    after = {s for t, s in target if t >= resume}
    assert {s for s in history if s >= committed} <= after
    if history == sorted(set(history)):  # nothing re-sent: nothing read twice
        assert all(s >= committed for t, s in target if t >= resume)
