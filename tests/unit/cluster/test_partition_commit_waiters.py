"""acks=all writes waiting on one partition's high watermark (Partition.wait_for_high_watermark).

Every waiter of a partition shares one change future. A write whose replication
times out must fail alone: the other writes still waiting are answered when the
followers catch up, and the partition goes on appending and advancing its high
watermark.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from partition_testing import one_record_batch

from odradek.broker.cluster.metadata_image import PartitionState
from odradek.broker.cluster.partition import Partition, PartitionKey
from odradek.broker.log import LogConfig, PartitionLog
from odradek.broker.protocol.errors import ErrorCode, KafkaError

LEADER, FOLLOWER = 0, 1


def leader_with_a_follower_in_sync(tmp_path: Path) -> Partition:
    log = PartitionLog.open(tmp_path / "t-0", LogConfig())
    state = PartitionState(0, (LEADER, FOLLOWER), LEADER, 1, (LEADER, FOLLOWER))
    return Partition(PartitionKey("t", 0), log, state, LEADER)


def test_a_write_timing_out_on_replication_leaves_the_other_waiters_and_later_writes_working(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        partition = leader_with_a_follower_in_sync(tmp_path)
        first = partition.append_as_leader(one_record_batch(), -1, 2)
        patient = asyncio.create_task(partition.wait_for_high_watermark(first.last_offset + 1, 30))
        await asyncio.sleep(0)  # the patient write is waiting on the shared change future

        with pytest.raises(KafkaError) as timed_out:
            await partition.wait_for_high_watermark(first.last_offset + 1, 0.05)
        assert timed_out.value.code == ErrorCode.request_timed_out

        second = partition.append_as_leader(one_record_batch(), -1, 2)
        partition.record_follower_fetch(FOLLOWER, partition.log_end_offset)
        await asyncio.wait_for(patient, 5)  # answered, not cancelled with the other
        assert partition.high_watermark == second.last_offset + 1
        await asyncio.wait_for(partition.wait_for_high_watermark(second.last_offset + 1, 5), 5)

    asyncio.run(scenario())
