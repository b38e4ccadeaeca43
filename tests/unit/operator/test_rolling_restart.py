from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from odradek.operator.planning.partitions import Partition
from odradek.operator.planning.rolling_restart import (
    Broker,
    Restart,
    UpToDate,
    Wait,
    next_restart,
)


def brokers(
    n: int, outdated: set[int] | None = None, unready: set[int] = frozenset()
) -> list[Broker]:
    stale = set(range(n)) if outdated is None else outdated
    return [Broker(i, ready=i not in unready, outdated=i in stale) for i in range(n)]


def full(topic: str, index: int, replicas: tuple[int, ...], min_isr: int = 2) -> Partition:
    return Partition(topic, index, replicas, replicas, min_isr)


def test_nothing_to_do_when_every_broker_is_up_to_date() -> None:
    assert next_restart(brokers(3, outdated=set()), [], controller=0) == UpToDate()


def test_brokers_restart_in_id_order_with_the_controller_last() -> None:
    order = []
    outdated = {0, 1, 2}
    while True:
        decision = next_restart(brokers(3, outdated), [], controller=1)
        if not isinstance(decision, Restart):
            break
        order.append(decision.broker)
        outdated.discard(decision.broker)
    assert order == [0, 2, 1]


def test_waits_for_a_restarted_broker_to_be_ready_before_the_next() -> None:
    decision = next_restart(brokers(3, outdated={1, 2}, unready={0}), [], controller=None)
    assert decision == Wait("waiting for broker 0 to be ready before restarting another")


def test_an_outdated_broker_that_is_not_ready_is_restarted_first() -> None:
    decision = next_restart(brokers(3, unready={2}), [], controller=None)
    assert isinstance(decision, Restart) and decision.broker == 2


def test_skips_a_broker_whose_restart_would_drop_a_partition_under_min_isr() -> None:
    partitions = [Partition("orders", 0, (0, 1, 2), isr=(0, 1), min_isr=2)]
    decision = next_restart(brokers(3), partitions, controller=None)
    assert decision == Restart(2, "broker 2 runs an old version")


def test_waits_with_a_sentence_when_every_restart_would_break_min_isr() -> None:
    partitions = [full("orders", 0, (0, 1), min_isr=2)]
    decision = next_restart(brokers(2), partitions, controller=None)
    assert isinstance(decision, Wait)
    assert "broker 0 would put orders-0 under min.insync.replicas" in decision.reason


@given(
    n=st.integers(1, 6),
    data=st.data(),
)
def test_a_restart_never_drops_an_in_sync_partition_under_min_isr(
    n: int, data: st.DataObject
) -> None:
    partitions = []
    for index in range(data.draw(st.integers(0, 8))):
        replicas = tuple(data.draw(st.permutations(range(n)))[: data.draw(st.integers(1, n))])
        isr = tuple(b for b in replicas if data.draw(st.booleans()))
        partitions.append(Partition("t", index, replicas, isr, data.draw(st.integers(1, 3))))
    outdated = set(data.draw(st.lists(st.integers(0, n - 1))))
    controller = data.draw(st.none() | st.integers(0, n - 1))
    decision = next_restart(brokers(n, outdated), partitions, controller)
    if isinstance(decision, Restart):
        assert decision.broker in outdated
        for p in partitions:
            if decision.broker in p.isr:
                assert len(p.isr) - 1 >= p.min_isr
        others = outdated - {decision.broker}
        if decision.broker == controller:
            assert all(not _safe(b, partitions) for b in others)
    elif not outdated:
        assert decision == UpToDate()


def _safe(broker: int, partitions: list[Partition]) -> bool:
    return all(broker not in p.isr or len(p.isr) - 1 >= p.min_isr for p in partitions)
