"""`odradek mirror` with ``exactlyOnce``: SIGKILLed under load and joined by a second
process, it leaves every acknowledged source record on the target exactly once for a
read_committed reader (librdkafka's), and the source offsets it resumes from in its own
compacted topic there."""

from __future__ import annotations

import time

from broker_process import Broker
from mirror_harness import MirrorFactory, create_topic, end_offsets, wait_until
from test_mirror_faults import LoadProducer
from test_transactions import read_committed

from odradek.mirror.internal_topics import read_mirror_offsets

pytest_plugins = ("mirror_harness",)  # fixtures: east_and_west, mirror_factory

PARTITIONS = 4
RATE = 500.0


def test_sigkills_and_a_rebalance_leave_every_record_exactly_once(
    east_and_west: tuple[Broker, Broker], mirror_factory: MirrorFactory
) -> None:
    source, target = east_and_west
    create_topic(source, "orders", PARTITIONS)
    load = LoadProducer(source, "orders", RATE)
    load.start()
    settings = {"topics": {"include": ["orders"]}, "queueSize": 500, "exactlyOnce": True}
    mirror = mirror_factory(source, target, name="eos", **settings)
    for _ in range(3):
        wait_until(lambda: mirror.metric("odradek_mirror_records_total") > 300, 60, "progress")
        mirror.kill()  # in the middle of transactions
        mirror.start()
    second = mirror_factory(source, target, name="eos", **settings)  # the group rebalances
    wait_until(lambda: second.metric("odradek_mirror_assigned_partitions") > 0, 60, "a share")
    time.sleep(1)
    load.stopping.set()
    load.join(30)

    expected = sorted(value.decode() for value in load.acked)
    copies: list[str] = []

    def complete() -> bool:
        copies[:] = read_committed(target.bootstrap, "east.orders", partitions=PARTITIONS)
        return len(copies) >= len(expected)

    wait_until(complete, 90, "every acknowledged source record on the target")
    assert copies == expected  # each exactly once: none lost, none duplicated
    stored = read_mirror_offsets(
        {"bootstrap.servers": target.bootstrap}, "east.mirror-offsets.internal", "eos"
    )
    assert stored == {("orders", p): end for p, end in end_offsets(source, "orders").items()}
