"""A consumer group's own configs (``kafka-configs --entity-type groups``) over the broker's:
``consumer.heartbeat.interval.ms`` is what its members are told, ``consumer.session.timeout.ms``
how long they may stay silent; other groups keep the broker's values."""

from __future__ import annotations

import asyncio
from pathlib import Path

from group_testing import group_config
from one_broker import one_broker

from odradek.broker.group.consumer_group import ConsumerGroupState
from odradek.broker.group.consumer_heartbeat import HeartbeatRequest
from odradek.broker.group.coordinator import GroupCoordinator

TOPIC = "orders"


def join(member_id: str) -> HeartbeatRequest:
    return HeartbeatRequest(
        member_id, 0, "client", "/127.0.0.1", rebalance_timeout_ms=5000,
        subscribed_topic_names=(TOPIC,),
    )  # fmt: skip


def test_a_groups_own_session_timeout_and_heartbeat_interval_override_the_brokers(
    tmp_path: Path,
) -> None:
    async def test() -> None:
        async with one_broker(tmp_path, TOPIC) as broker:
            config = group_config(
                offsets_topic_partitions=1,
                consumer_session_timeout_ms=5000,
                consumer_heartbeat_interval_ms=100,
            )
            coordinator = GroupCoordinator(config, broker.store, broker.replicas, lambda: 1)
            coordinator.start()
            await coordinator.find_coordinator("any")
            while coordinator.catalog.loading:
                await asyncio.sleep(0.001)
            quick = {"consumer.session.timeout.ms": "300", "consumer.heartbeat.interval.ms": "50"}
            await broker.store.set_group_configs("quick", quick)
            try:
                told_quick = await coordinator.consumer_heartbeat("quick", join("a"), 1)
                told_slow = await coordinator.consumer_heartbeat("slow", join("b"), 1)
                await asyncio.sleep(0.6)  # past the quick group's session, within the broker's

                assert (told_quick.heartbeat_interval_ms, told_slow.heartbeat_interval_ms) == (
                    50,
                    100,
                )
                states = {}
                for group_id in ("quick", "slow"):
                    described = coordinator.describe(group_id)
                    assert described is not None and described.consumer is not None
                    states[group_id] = described.consumer.state
                assert states["quick"] is ConsumerGroupState.EMPTY
                assert states["slow"] is not ConsumerGroupState.EMPTY
            finally:
                await coordinator.stop()

    asyncio.run(asyncio.wait_for(test(), 10))
