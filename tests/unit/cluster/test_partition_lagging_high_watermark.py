"""ListOffsets on a new leader whose high watermark still lags its log end at election.

The new leader learns the high watermark from its followers' first fetches; until it
reaches the offset the leader epoch started at, "latest" (and a timestamp found only past
the high watermark) would hand a client an offset below one it may already have seen, so
Kafka answers the retriable OFFSET_NOT_AVAILABLE (KIP-207) and the earliest offset as usual.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from partition_testing import one_record_batch

from odradek.broker.cluster.metadata_image import PartitionState
from odradek.broker.cluster.partition import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    Partition,
    PartitionKey,
)
from odradek.broker.log import LogConfig, PartitionLog
from odradek.broker.protocol.errors import ErrorCode, KafkaError

NODE = 2
REPLICAS = (0, 1, NODE)


def new_leader_of_ten_records(tmp_path: Path) -> Partition:
    """Ten records replicated from broker 0, which died before the follower heard of their
    high watermark; the controller then made this replica leader with broker 1 in sync."""
    log = PartitionLog.open(tmp_path / "t-0", LogConfig())
    for _ in range(10):
        log.append_as_leader(one_record_batch(), 3)
    partition = Partition(
        PartitionKey("t", 0), log, PartitionState(0, REPLICAS, 0, 3, REPLICAS), NODE
    )
    partition.apply_state(PartitionState(0, REPLICAS, NODE, 4, (1, NODE)))
    return partition


def test_latest_offset_is_not_available_until_the_high_watermark_reaches_the_epoch_start(
    tmp_path: Path,
) -> None:
    partition = new_leader_of_ten_records(tmp_path)
    assert partition.high_watermark == 0
    for timestamp in (LATEST_TIMESTAMP, MAX_TIMESTAMP):
        with pytest.raises(KafkaError) as refused:
            partition.find_offset(timestamp)
        assert refused.value.code is ErrorCode.offset_not_available
        assert "high watermark 0 lags the start of leader epoch 4 at 10" in refused.value.message
    assert partition.find_offset(EARLIEST_TIMESTAMP).offset == 0

    partition.record_follower_fetch(1, 10)  # broker 1's first fetch: it holds all ten
    assert partition.high_watermark == 10
    assert partition.find_offset(LATEST_TIMESTAMP).offset == 10
    assert partition.find_offset(MAX_TIMESTAMP).offset == 0  # all ten share one timestamp


def test_a_leader_whose_high_watermark_caught_up_answers_as_before(tmp_path: Path) -> None:
    partition = new_leader_of_ten_records(tmp_path)
    partition.record_follower_fetch(1, 10)
    partition.append_as_leader(one_record_batch(), required_acks=1, min_insync=1)  # unreplicated
    assert partition.find_offset(LATEST_TIMESTAMP).offset == 10
