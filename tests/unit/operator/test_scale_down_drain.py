from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from odradek.operator.planning.partitions import Partition
from odradek.operator.planning.scale_down import plan_scale_down


def p(index: int, replicas: tuple[int, ...]) -> Partition:
    return Partition("orders", index, replicas, replicas)


def test_empty_highest_ordinals_let_the_statefulset_shrink() -> None:
    plan = plan_scale_down(5, 3, [p(0, (0, 1, 2))], {})
    assert plan.shrink and plan.leaving == (3, 4) and not plan.moves


def test_brokers_holding_replicas_are_drained_first_and_status_says_which() -> None:
    plan = plan_scale_down(5, 3, [p(0, (0, 4, 1)), p(1, (3, 2, 0))], {})
    assert not plan.shrink
    assert plan.moves == {("orders", 0): (0, 2, 1), ("orders", 1): (1, 2, 0)}
    assert (
        plan.reason
        == "draining before scale-down: broker 3 holds orders-1; broker 4 holds orders-0"
    )


def test_scale_down_is_refused_when_a_partition_needs_more_brokers_than_would_remain() -> None:
    plan = plan_scale_down(3, 2, [p(0, (0, 1, 2))], {})
    assert not plan.shrink and not plan.moves
    assert "orders-0 need 3 replicas" in plan.reason


@given(st.data())
def test_a_drain_moves_every_replica_off_the_leaving_brokers(data: st.DataObject) -> None:
    current = data.draw(st.integers(2, 8))
    desired = data.draw(st.integers(1, current - 1))
    partitions = []
    for index in range(data.draw(st.integers(0, 10))):
        rf = data.draw(st.integers(1, desired))
        partitions.append(p(index, tuple(data.draw(st.permutations(range(current)))[:rf])))
    plan = plan_scale_down(current, desired, partitions, {b: "ab"[b % 2] for b in range(current)})
    after = {(q.topic, q.index): plan.moves.get((q.topic, q.index), q.replicas) for q in partitions}
    assert all(max(r) < desired and len(set(r)) == len(r) for r in after.values())
    assert plan.shrink == (not plan.moves)
