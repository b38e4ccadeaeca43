from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from odradek.operator.planning.partitions import Partition, replica_load
from odradek.operator.planning.rebalance import plan_rebalance


def test_new_brokers_receive_follower_replicas_until_loads_are_even() -> None:
    partitions = [Partition("t", i, (i % 3, (i + 1) % 3), ()) for i in range(6)]
    moves = plan_rebalance(partitions, [0, 1, 2, 3, 4], {})
    after = [
        Partition(q.topic, q.index, moves.get((q.topic, q.index), q.replicas), ())
        for q in partitions
    ]
    load = replica_load(after, range(5))
    assert max(load.values()) - min(load.values()) <= 1
    assert all(a.replicas[0] == b.replicas[0] for a, b in zip(partitions, after, strict=True))


@given(st.data())
def test_rebalance_keeps_leaders_and_distinct_replicas(data: st.DataObject) -> None:
    old = data.draw(st.integers(1, 5))
    partitions = []
    for index in range(data.draw(st.integers(0, 12))):
        rf = data.draw(st.integers(1, old))
        partitions.append(
            Partition("t", index, tuple(data.draw(st.permutations(range(old)))[:rf]), ())
        )
    brokers = list(range(old + data.draw(st.integers(1, 3))))
    moves = plan_rebalance(partitions, brokers, {})
    for q in partitions:
        new = moves.get((q.topic, q.index), q.replicas)
        assert new[0] == q.replicas[0] and len(set(new)) == len(new) == len(q.replicas)
