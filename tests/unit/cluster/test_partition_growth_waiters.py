"""What wakes a waiting fetch: a consumer's for any change (a high watermark makes records
readable), a follower's only for new records or a new state (Kafka completes a follower's
delayed fetch on bytes alone), so one follower's fetch advancing the high watermark does
not wake the other's to read everything again."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from partition_testing import one_record_batch

from odradek.broker.cluster.metadata_image import PartitionState
from odradek.broker.cluster.partition import Partition, PartitionKey
from odradek.broker.log import LogConfig, PartitionLog

LEADER, FOLLOWER, OTHER = 0, 1, 2


def leader_with_two_followers(tmp_path: Path) -> Partition:
    log = PartitionLog.open(tmp_path / "t-0", LogConfig())
    replicas = (LEADER, FOLLOWER, OTHER)
    return Partition(PartitionKey("t", 0), log, PartitionState(0, replicas, LEADER, 1, replicas), 0)


def test_a_high_watermark_alone_wakes_consumers_not_followers(tmp_path: Path) -> None:
    async def scenario() -> None:
        partition = leader_with_two_followers(tmp_path)
        written = partition.append_as_leader(one_record_batch(), -1, 2)
        growth, change = partition.wait_for_growth(), partition.wait_for_change()

        partition.record_follower_fetch(FOLLOWER, written.last_offset + 1)
        partition.record_follower_fetch(OTHER, written.last_offset + 1)

        assert partition.high_watermark == written.last_offset + 1
        assert change.done() and not growth.done()
        partition.append_as_leader(one_record_batch(), -1, 2)
        assert growth.done()

    asyncio.run(scenario())


def test_a_new_state_wakes_followers(tmp_path: Path) -> None:
    async def scenario() -> None:
        partition = leader_with_two_followers(tmp_path)
        growth = partition.wait_for_growth()

        partition.apply_state(replace(partition.state, leader=FOLLOWER, leader_epoch=2))

        assert growth.done()  # the waiting fetch answers NOT_LEADER at once

    asyncio.run(scenario())
