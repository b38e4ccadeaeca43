"""A leader adding a follower to the ISR (Kafka's maximal ISR, KIP-497).

From the moment the leader writes an ISR that adds a follower, the high watermark
waits for that follower too: once the write lands, the controller may elect it, so
no write may be committed without it. Until the image shows the outcome, and once
etcd says the write did not happen, the follower stops counting.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from partition_testing import one_record_batch

from odradek.broker.cluster.metadata_image import PartitionState
from odradek.broker.cluster.partition import Partition, PartitionKey
from odradek.broker.log import LogConfig, PartitionLog

LEADER, FOLLOWER = 0, 1
LAG_MAX_S = 10.0


def leader_alone(tmp_path: Path) -> Partition:
    log = PartitionLog.open(tmp_path / "t-0", LogConfig())
    state = PartitionState(0, (LEADER, FOLLOWER), LEADER, 1, (LEADER,))
    partition = Partition(PartitionKey("t", 0), log, state, LEADER)
    for _ in range(5):
        partition.append_as_leader(one_record_batch(), -1, 1)
    return partition


def caught_up_and_proposed(partition: Partition) -> PartitionState:
    partition.record_follower_fetch(FOLLOWER, partition.log_end_offset)
    proposed = partition.proposed_isr(LAG_MAX_S)
    assert proposed is not None and proposed.isr == (LEADER, FOLLOWER)
    return proposed


def test_a_follower_being_added_holds_the_high_watermark_back(tmp_path: Path) -> None:
    async def scenario() -> None:
        partition = leader_alone(tmp_path)
        assert partition.high_watermark == 5
        proposed = caught_up_and_proposed(partition)
        partition.expanding(proposed)
        partition.append_as_leader(one_record_batch(), -1, 1)
        assert partition.high_watermark == 5, "committed without the follower being added"
        partition.record_follower_fetch(FOLLOWER, 6)
        assert partition.high_watermark == 6
        partition.apply_state(proposed)  # the write landed
        partition.append_as_leader(one_record_batch(), -1, 1)
        assert partition.high_watermark == 6

    asyncio.run(scenario())


def test_an_expansion_that_did_not_happen_stops_holding_the_high_watermark(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        partition = leader_alone(tmp_path)
        partition.expanding(caught_up_and_proposed(partition))
        partition.append_as_leader(one_record_batch(), -1, 1)
        assert partition.high_watermark == 5
        assert partition.joining == {FOLLOWER}
        partition.expansion_not_written()
        partition.append_as_leader(one_record_batch(), -1, 1)
        assert partition.high_watermark == 7
        assert not partition.joining

    asyncio.run(scenario())


def test_another_state_from_the_image_ends_the_expansion(tmp_path: Path) -> None:
    async def scenario() -> None:
        partition = leader_alone(tmp_path)
        proposed = caught_up_and_proposed(partition)
        partition.expanding(proposed)
        # The controller changed the state first (a new epoch without the follower).
        partition.apply_state(replace(partition.state, leader_epoch=2))
        assert not partition.joining

    asyncio.run(scenario())


def test_barred_brokers_do_not_rejoin(tmp_path: Path) -> None:
    async def scenario() -> None:
        partition = leader_alone(tmp_path)
        partition.record_follower_fetch(FOLLOWER, partition.log_end_offset)
        assert partition.proposed_isr(LAG_MAX_S, barred={FOLLOWER}) is None

    asyncio.run(scenario())
