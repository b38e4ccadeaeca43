"""Offset and time indexes: floor lookups, truncation, reload, torn entries."""

from __future__ import annotations

import tempfile
from bisect import bisect_right
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from odradek.broker.log.offset_index import OffsetIndex
from odradek.broker.log.time_index import TimeIndex

BASE = 1_000
increasing = st.lists(st.integers(0, 10_000), unique=True).map(sorted)


def floor(keys: list[int], target: int) -> int | None:
    slot = bisect_right(keys, target) - 1
    return keys[slot] if slot >= 0 else None


@given(offsets=increasing, target=st.integers(-10, 11_000))
def test_offset_index_lookup_returns_the_greatest_entry_not_above_the_target(
    offsets: list[int], target: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        index = OffsetIndex(Path(tmp) / "i.index", BASE)
        for offset in offsets:
            index.append(BASE + offset, offset * 10)
        expected = floor(offsets, target)
        assert index.lookup(BASE + target) == (0 if expected is None else expected * 10)

        index.write_entries()
        reloaded = OffsetIndex(Path(tmp) / "i.index", BASE)
        assert reloaded.lookup(BASE + target) == index.lookup(BASE + target)


@given(offsets=increasing, cut=st.integers(0, 10_001))
def test_offset_index_truncation_keeps_entries_below_the_offset(
    offsets: list[int], cut: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "i.index"
        index = OffsetIndex(path, BASE)
        for offset in offsets:
            index.append(BASE + offset, offset)
        index.truncate_to(BASE + cut)
        index.write_entries()

        assert len(OffsetIndex(path, BASE)) == len([o for o in offsets if o < cut])


def test_offset_index_cuts_a_torn_last_entry_on_load(tmp_path: Path) -> None:
    path = tmp_path / "i.index"
    index = OffsetIndex(path, BASE)
    index.append(BASE + 5, 100)
    index.append(BASE + 9, 200)
    index.write_entries()
    path.write_bytes(path.read_bytes()[:-3])

    reloaded = OffsetIndex(path, BASE)
    assert len(reloaded) == 1
    assert reloaded.lookup(BASE + 100) == 100
    assert path.stat().st_size == 8


def test_offset_index_pointing_past_the_log_is_inconsistent(tmp_path: Path) -> None:
    index = OffsetIndex(tmp_path / "i.index", BASE)
    index.append(BASE + 1, 500)
    assert index.is_consistent(501)
    assert not index.is_consistent(500)
    index.write_entries()


@given(
    entries=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 50)), max_size=40),
    target=st.integers(-1, 10**6 + 1),
)
def test_time_index_keeps_only_growing_timestamps_and_finds_their_floor(
    entries: list[tuple[int, int]], target: int
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        index = TimeIndex(Path(tmp) / "i.timeindex", BASE)
        offset, kept = 0, []
        for timestamp, step in entries:
            offset += step
            if not kept or timestamp > kept[-1][0]:
                kept.append((timestamp, offset))
            index.maybe_append(timestamp, BASE + offset)
        index.write_entries()

        reloaded = TimeIndex(Path(tmp) / "i.timeindex", BASE)
        slot = bisect_right([t for t, _ in kept], target) - 1
        assert reloaded.lookup(target) == BASE + (kept[slot][1] if slot >= 0 else 0)
        assert reloaded.last_entry == ((kept[-1][0], BASE + kept[-1][1]) if kept else None)
