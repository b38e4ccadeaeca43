"""The share coordinator and the share-partitions of a broker over real partition logs (no
sockets): state written, fenced, initialized, deleted and read back after a restart;
records acquired from the log and acknowledged into the written state."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder
from one_broker import OneBroker, one_broker

from odradek.broker.cluster.internal_topics import InternalTopic
from odradek.broker.cluster.peer_pool import PeerPool
from odradek.broker.cluster.peer_security import PLAINTEXT
from odradek.broker.config.share_auto_offset_reset import ResetStrategy, ShareAutoOffsetReset
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.share.share_config import ShareConfig
from odradek.broker.share.share_coordinator import ShareCoordinator
from odradek.broker.share.share_partition import AcknowledgeType
from odradek.broker.share.share_partition_manager import (
    Acknowledgement,
    ShareGroupSettings,
    SharePartitionManager,
)
from odradek.broker.share.share_persister import SharePersister
from odradek.broker.share.share_state import (
    SHARE_STATE_TOPIC,
    DeliveryState,
    SharePartitionKey,
    ShareState,
    StateBatch,
)

TOPIC = "jobs"
CONFIG = ShareConfig(
    state_topic=InternalTopic(
        SHARE_STATE_TOPIC,
        3,
        1,
        "share.coordinator.state.topic.replication.factor",
        {"cleanup.policy": "compact"},
    ),
    state_min_insync=1,
    write_timeout_ms=2000,
    max_share_sessions=10,
    fetch_max_bytes=1 << 20,
)
SETTINGS = ShareGroupSettings(
    ShareAutoOffsetReset(ResetStrategy.EARLIEST),
    record_lock_duration_ms=60_000,
    delivery_count_limit=3,
    partition_max_record_locks=100,
)


@asynccontextmanager
async def coordinator_on(broker: OneBroker) -> AsyncIterator[ShareCoordinator]:
    coordinator = ShareCoordinator(CONFIG, broker.store, broker.replicas)
    coordinator.start()
    await coordinator.find_coordinator(SharePartitionKey("g", uuid.uuid4(), 0))  # the topic
    while coordinator.partitions.loading:
        await asyncio.sleep(0.001)
    try:
        yield coordinator
    finally:
        await coordinator.stop()


def key_of(broker: OneBroker, group: str = "g") -> SharePartitionKey:
    return SharePartitionKey(group, broker.store.image.topics[TOPIC].topic_id, 0)


def test_state_is_read_back_after_a_restart_and_stale_writers_are_fenced(tmp_path: Path) -> None:
    asyncio.run(asyncio.wait_for(restart_and_fencing(tmp_path), 20))


async def restart_and_fencing(tmp_path: Path) -> None:
    written = ShareState(5, 0, 3, (StateBatch(5, 6, DeliveryState.AVAILABLE, 2),))
    async with one_broker(tmp_path, TOPIC) as broker, coordinator_on(broker) as coordinator:
        key = key_of(broker)
        assert coordinator.read(key) is None
        await coordinator.write(key, written)
        with pytest.raises(KafkaError) as fenced:  # a deposed partition leader
            await coordinator.write(key, ShareState(9, 0, 2))
        assert fenced.value.code is ErrorCode.fenced_leader_epoch
    async with one_broker(tmp_path, TOPIC) as broker, coordinator_on(broker) as coordinator:
        loaded = coordinator.read(key_of(broker))
        assert loaded is not None
        assert (loaded.start_offset, loaded.leader_epoch, loaded.batches) == (5, 3, written.batches)
        await coordinator.initialize(key_of(broker), 1, 0)  # an admin's reset
        with pytest.raises(KafkaError) as reset:
            await coordinator.write(key_of(broker), written)  # the leader, before it reloads
        assert reset.value.code is ErrorCode.fenced_state_epoch
        await coordinator.delete(key_of(broker))
        assert coordinator.read(key_of(broker)) is None


def test_acknowledged_records_move_the_written_start_offset(tmp_path: Path) -> None:
    asyncio.run(asyncio.wait_for(acknowledging(tmp_path), 20))


async def acknowledging(tmp_path: Path) -> None:
    async with one_broker(tmp_path, TOPIC) as broker, coordinator_on(broker) as coordinator:
        partition = broker.replicas.get(TOPIC, 0)
        for index in range(3):
            builder = DefaultRecordBatchBuilder(
                magic=2, compression_type=0, is_transactional=False, producer_id=-1,
                producer_epoch=-1, base_sequence=-1, batch_size=1 << 20,
            )  # fmt: skip
            builder.append(
                0, timestamp=1_700_000_000_000, key=None, value=b"%d" % index, headers=[]
            )
            partition.append_as_leader(bytes(builder.build()), -1, 1)
        peers = PeerPool(broker.store, 2.0, PLAINTEXT)
        persister = SharePersister(0, coordinator, peers)
        shares = SharePartitionManager(CONFIG, broker.replicas, persister, lambda _: SETTINGS)
        key = key_of(broker)
        try:
            got = await shares.acquire(key, TOPIC, "a", 2, 1 << 20, exact=True)
            assert [(r.first_offset, r.last_offset) for r in got.ranges] == [(0, 1)]
            assert got.records  # the log's batches holding them
            accept = Acknowledgement(0, 1, (AcknowledgeType.ACCEPT,))
            await shares.acknowledge(key, TOPIC, "a", [accept])
            state = coordinator.read(key)
            assert state is not None and state.start_offset == 2
            with pytest.raises(KafkaError) as refused:  # not acquired by that member
                await shares.acknowledge(key, TOPIC, "b", [Acknowledgement(2, 2, (1,))])
            assert refused.value.code is ErrorCode.invalid_record_state
        finally:
            await shares.stop()
            peers.close()
