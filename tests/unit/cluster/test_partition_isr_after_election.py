"""A new leader's view of its followers right after an election (Kafka's resetReplicaState).

A replica that becomes leader gives every in-sync follower a full
``replica.lag.time.max.ms`` from the election to catch up: a follower whose
first fetch is a few records behind the new leader's end must stay in the ISR.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from partition_testing import one_record_batch

from odradek.broker.cluster.metadata_image import PartitionState
from odradek.broker.cluster.partition import Partition, PartitionKey
from odradek.broker.log import LogConfig, PartitionLog

LAG_MAX_S = 3.0
NODE = 2


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_follower_slightly_behind_at_its_first_fetch_after_an_election_stays_in_sync(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        clock = FakeClock()
        log = PartitionLog.open(tmp_path / "t-0", LogConfig())
        for _ in range(10):  # replicated from the old leader, broker 0
            log.append_as_leader(one_record_batch(), 3)
        follower_state = PartitionState(0, (0, 1, NODE), leader=0, leader_epoch=3, isr=(0, 1, NODE))
        partition = Partition(PartitionKey("t", 0), log, follower_state, NODE, clock=clock)
        # Broker 0 died: the controller makes this replica leader with the survivors in sync.
        partition.apply_state(PartitionState(0, (0, 1, NODE), NODE, 4, (1, NODE)))
        clock.now += 0.1
        partition.record_follower_fetch(1, log.log_end_offset - 3)  # three records behind
        clock.now += 0.5
        assert partition.proposed_isr(LAG_MAX_S) is None, "the follower left the ISR at once"

    asyncio.run(scenario())
