"""Moving a replica between log directories while it serves (AlterReplicaLogDirs): the
copy catches up with appends made during the move, follows truncations, and replaces the
log with every batch in place; the old files go after file.delete.delay.ms."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from odradek.broker.cluster.log_dir_mover import LogDirMover
from odradek.broker.cluster.metadata_image import PartitionState
from odradek.broker.cluster.partition import Partition, PartitionKey
from odradek.broker.log import LogConfig, LogManager
from odradek.broker.protocol.errors import KafkaError

NODE = 0
KEY = PartitionKey("t", 0)
CONFIG = LogConfig(segment_bytes=4096, file_delete_delay_ms=0)


def batch(count: int, value: bytes = b"v" * 100) -> bytes:
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, batch_size=1 << 20)
    for i in range(count):
        builder.append(i, timestamp=1_700_000_000_000 + i, key=None, value=value, headers=[])
    return bytes(builder.build())


Scenario = Callable[[LogManager, Partition, LogDirMover, Path], Awaitable[None]]


def run(tmp_path: Path, scenario: Scenario) -> None:
    """A leader replica of ``t-0`` in ``tmp_path/a`` with a second log dir ``tmp_path/b``."""
    a, b = tmp_path / "a", tmp_path / "b"

    async def main() -> None:
        logs = LogManager(a, b)
        logs.load()
        logs.prefer_log_dir("t", 0, a)
        state = PartitionState(0, replicas=(NODE,), leader=NODE, leader_epoch=3, isr=(NODE,))
        partition = Partition(KEY, logs.get_or_create("t", 0, CONFIG), state, NODE)
        mover = LogDirMover(logs)
        try:
            await asyncio.wait_for(scenario(logs, partition, mover, b), 30)
        finally:
            await mover.stop()
            logs.close_all()

    asyncio.run(main())


async def moved(partition: Partition) -> None:
    while partition.future_log is not None:
        await asyncio.sleep(0.01)


def contents(partition: Partition) -> bytes:
    result = partition.read(0, 1 << 30, committed_only=False)
    return b"".join(region.read() for region in result.regions)


def test_a_move_under_appends_carries_every_batch_to_the_new_directory(tmp_path: Path) -> None:
    async def scenario(
        logs: LogManager, partition: Partition, mover: LogDirMover, target: Path
    ) -> None:
        for _ in range(50):
            partition.append_as_leader(batch(5), required_acks=1, min_insync=1)
        mover.alter(partition, KEY, str(target))
        assert partition.future_log is not None
        for _ in range(50):  # appended while the copy is made
            partition.append_as_leader(batch(5), required_acks=1, min_insync=1)
            await asyncio.sleep(0)
        before = contents(partition)
        await moved(partition)
        await asyncio.sleep(0.05)  # file.delete.delay.ms = 0: the old files go next
        assert partition.log.directory == target / "t-0"
        assert partition.log.log_end_offset == 500
        assert contents(partition) == before
        assert partition.log.latest_epoch == 3
        assert [p.name for p in (tmp_path / "a").iterdir() if p.is_dir()] == []

    run(tmp_path, scenario)


def test_a_truncation_during_the_move_is_made_in_the_copy_too(tmp_path: Path) -> None:
    async def scenario(
        logs: LogManager, partition: Partition, mover: LogDirMover, target: Path
    ) -> None:
        for _ in range(3):
            partition.append_as_leader(batch(1), required_acks=1, min_insync=1)
        future = logs.create_future("t", 0, target)
        partition.future_log = future
        partition.copy_to_future(1 << 20)
        assert future.log_end_offset == 3
        partition.state = PartitionState(0, (NODE, 1), leader=1, leader_epoch=4, isr=(NODE, 1))
        partition.truncate_to_leader(leader_epoch=-1, leader_end=1)  # to the high watermark
        assert future.log_end_offset == partition.log.log_end_offset

    run(tmp_path, scenario)


def test_moving_back_to_where_the_replica_is_cancels_the_move(tmp_path: Path) -> None:
    async def scenario(
        logs: LogManager, partition: Partition, mover: LogDirMover, target: Path
    ) -> None:
        partition.append_as_leader(batch(1), required_acks=1, min_insync=1)
        partition.future_log = logs.create_future("t", 0, target)  # as a restart finds it
        mover.alter(partition, KEY, str(tmp_path / "a"))
        assert partition.future_log is None and logs.future("t", 0) is None
        assert not [p for p in target.iterdir() if p.is_dir()]

    run(tmp_path, scenario)


def test_a_replica_not_here_yet_is_replica_not_available_and_created_there_later(
    tmp_path: Path,
) -> None:
    async def scenario(
        logs: LogManager, partition: Partition, mover: LogDirMover, target: Path
    ) -> None:
        with pytest.raises(KafkaError) as refused:
            mover.alter(None, PartitionKey("t", 1), str(target))
        assert refused.value.code.name == "replica_not_available"
        logs.get_or_create("t", 2, CONFIG)  # fewest partitions would now pick b for t-1 anyway
        logs.get_or_create("t", 3, CONFIG)
        logs.get_or_create("t", 1, CONFIG)
        assert logs.log_dir_of("t", 1) == target

    run(tmp_path, scenario)
