from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from odradek.operator.planning.replica_placement import (
    PlacementError,
    add_replicas,
    choose_broker,
    replace_replicas,
)

RACKS = {0: "a", 1: "b", 2: "c", 3: "a", 4: "b", 5: "c"}


def test_a_new_replica_goes_to_a_rack_the_partition_does_not_use() -> None:
    load = Counter({b: 0 for b in RACKS})
    assert RACKS[choose_broker([0, 1], RACKS, RACKS, load)] == "c"


def test_among_equal_racks_the_least_loaded_broker_wins() -> None:
    load = Counter({0: 5, 1: 5, 2: 9, 3: 5, 4: 5, 5: 1})
    assert choose_broker([0, 1], RACKS, RACKS, load) == 5


def test_without_racks_the_least_loaded_broker_wins() -> None:
    load = Counter({0: 3, 1: 1, 2: 2})
    assert choose_broker([0], [0, 1, 2], {}, load) == 1


def test_no_free_broker_is_a_placement_error() -> None:
    with pytest.raises(PlacementError):
        choose_broker([0, 1], [0, 1], {}, Counter())


def test_replacing_keeps_the_positions_of_staying_replicas() -> None:
    load = Counter({b: 0 for b in range(4)})
    assert replace_replicas((3, 0, 1), {3}, range(4), {}, load) == (2, 0, 1)
    assert load == Counter({0: 0, 1: 0, 2: 1, 3: -1})


@given(st.data())
def test_replacement_yields_distinct_staying_brokers_of_the_same_count(data: st.DataObject) -> None:
    n = data.draw(st.integers(2, 9))
    rf = data.draw(st.integers(1, n))
    replicas = tuple(data.draw(st.permutations(range(n)))[:rf])
    leaving = set(data.draw(st.lists(st.integers(0, n - 1), max_size=n - rf)))
    racks = {b: data.draw(st.sampled_from(["a", "b", "c", None])) for b in range(n)}
    staying = [b for b in range(n) if b not in leaving]
    if len(staying) < rf:
        return
    result = replace_replicas(replicas, leaving, range(n), racks, Counter())
    assert len(result) == rf == len(set(result))
    assert not set(result) & leaving
    for before, after in zip(replicas, result, strict=True):
        if before not in leaving:
            assert before == after


@given(st.integers(1, 3), st.integers(3, 9))
def test_growing_replication_spreads_over_all_racks_first(rf: int, n: int) -> None:
    racks = {b: "abc"[b % 3] for b in range(n)}
    result = add_replicas((0,), rf - 1, range(n), racks, Counter())
    assert len({racks[b] for b in result}) == min(len(result), 3)
