"""Pure offset logic of format odradek: resolution, range planning, admission, data loss."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from odradek.spark.admission import admit
from odradek.spark.data_loss import DataLossError, check_ends, reconcile_starts
from odradek.spark.offset_resolution import resolve_offsets
from odradek.spark.offsets import TopicPartition, from_json, to_json
from odradek.spark.options import AtTimestamp, Earliest, Latest, OptionError, SpecificOffsets
from odradek.spark.range_planning import plan_ranges
from odradek.spark.subscription import Assign, Subscribe, SubscribePattern, select_partitions

T0, T1, U0 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)
EARLIEST = {T0: 5, T1: 0}
LATEST = {T0: 50, T1: 20}

backlogs = st.dictionaries(
    st.builds(TopicPartition, st.sampled_from("abc"), st.integers(0, 5)),
    st.tuples(st.integers(0, 1000), st.integers(0, 1000)),
    max_size=12,
)


def test_offsets_round_trip_through_the_checkpoint_json() -> None:
    offsets = {T0: 3, T1: 4, U0: 0}
    assert to_json(offsets) == {"t": {"0": 3, "1": 4}, "u": {"0": 0}}
    assert from_json(to_json(offsets)) == offsets


def test_subscriptions_select_existing_partitions() -> None:
    counts = {"t": 2, "u": 1, "__consumer_offsets": 50}
    assert select_partitions(Subscribe(("t", "missing")), counts) == [T0, T1]
    assert select_partitions(SubscribePattern("[tu]"), counts) == [T0, T1, U0]
    assert select_partitions(SubscribePattern(".*offsets"), counts) == []
    assert select_partitions(Assign((T1, TopicPartition("t", 7))), counts) == [T1]


def test_offset_specs_resolve_against_earliest_and_latest() -> None:
    tps = [T0, T1]
    assert resolve_offsets(Earliest(), "o", tps, EARLIEST, LATEST) == EARLIEST
    assert resolve_offsets(Latest(), "o", tps, EARLIEST, LATEST) == LATEST
    spec = SpecificOffsets({T0: -1, T1: 7})
    assert resolve_offsets(spec, "o", tps, EARLIEST, LATEST) == {T0: 50, T1: 7}
    found = {T0: 12, T1: -1}
    assert resolve_offsets(
        AtTimestamp(99), "o", tps, EARLIEST, LATEST, found, timestamp_strategy="latest"
    ) == {T0: 12, T1: 20}


def test_unresolvable_specs_name_the_option() -> None:
    with pytest.raises(OptionError, match=r"startingOffsets.*t-1"):
        resolve_offsets(SpecificOffsets({T0: 1}), "startingOffsets", [T0, T1], EARLIEST, LATEST)
    with pytest.raises(OptionError, match="startingOffsetsByTimestampStrategy"):
        resolve_offsets(AtTimestamp(1), "o", [T1], EARLIEST, LATEST, {T1: -1})


@given(backlogs, st.integers(1, 40))
def test_planned_ranges_cover_every_offset_once(
    bounds: dict[TopicPartition, tuple[int, int]], min_partitions: int
) -> None:
    start = {tp: min(a, b) for tp, (a, b) in bounds.items()}
    end = {tp: max(a, b) for tp, (a, b) in bounds.items()}
    ranges = plan_ranges(start, end, min_partitions)
    covered = sorted(
        (TopicPartition(r.topic, r.partition), o) for r in ranges for o in range(r.start, r.end)
    )
    assert covered == sorted((tp, o) for tp in end for o in range(start[tp], end[tp]))
    assert all(r.size > 0 for r in ranges)
    assert len(ranges) >= min(min_partitions, len(covered))


def test_one_range_per_partition_without_min_partitions() -> None:
    assert len(plan_ranges({T0: 0, T1: 0}, {T0: 100, T1: 1}, None)) == 2
    split = plan_ranges({T0: 0, T1: 0}, {T0: 100, T1: 1}, 5)
    assert [r.size for r in split if r.partition == 0] == [20] * 5  # ceil(100 / 101 * 5)


@given(backlogs, st.integers(1, 3000))
def test_admission_never_exceeds_the_limit_nor_the_backlog(
    bounds: dict[TopicPartition, tuple[int, int]], limit: int
) -> None:
    start = {tp: a for tp, (a, _) in bounds.items()}
    latest = {tp: b for tp, (_, b) in bounds.items()}
    end = admit(start, latest, limit)
    admitted = sum(end[tp] - start[tp] for tp in end)
    backlog = sum(max(0, latest[tp] - start[tp]) for tp in latest)
    assert admitted == min(limit, backlog)
    assert all(start[tp] <= end[tp] <= max(start[tp], latest[tp]) for tp in end)


def test_admission_shares_the_limit_in_proportion_to_backlog() -> None:
    assert admit({T0: 0, T1: 0}, {T0: 300, T1: 100}, 100) == {T0: 75, T1: 25}


def test_deleted_records_fail_or_move_the_start_per_fail_on_data_loss() -> None:
    with pytest.raises(DataLossError, match="failOnDataLoss"):
        reconcile_starts({T0: 1}, {T0: 5}, fail=True)
    assert reconcile_starts({T0: 1, U0: 3}, {T0: 5, T1: 0}, fail=False) == {T0: 5, T1: 0}
    with pytest.raises(DataLossError, match="no longer exists"):
        reconcile_starts({U0: 3}, {}, fail=True)
    with pytest.raises(DataLossError, match="new partition t-1 starts at offset 4"):
        reconcile_starts({}, {T1: 4}, fail=True)
    with pytest.raises(DataLossError, match="went back"):
        check_ends({T0: 10}, {T0: 2}, fail=True)
    check_ends({T0: 10}, {T0: 2}, fail=False)
