"""New replicas' logs past the first INLINE_NEW_LOGS of an image are made in a worker
thread, a batch at a time: the event loop turns between batches (thousands of new replicas
once held it long enough to cost the broker its etcd session), the replicas answer
NOT_LEADER_OR_FOLLOWER until served, and what the image no longer assigns meanwhile
leaves no log behind."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from loop_turns import counting_turns

from odradek.broker.cluster.metadata_image import MetadataImage, PartitionState, TopicMetadata
from odradek.broker.cluster.partition import PartitionKey
from odradek.broker.cluster.replica_manager import (
    INLINE_NEW_LOGS,
    NEW_LOGS_PER_BATCH,
    ReplicaManager,
)
from odradek.broker.log import LogConfig, LogManager
from odradek.broker.protocol.errors import ErrorCode, KafkaError

NODE = 0
MANY = INLINE_NEW_LOGS + 3 * NEW_LOGS_PER_BATCH + 5


def topic(name: str, partitions: int) -> TopicMetadata:
    states = tuple(PartitionState(p, (NODE,), NODE, 1, (NODE,)) for p in range(partitions))
    return TopicMetadata(name, uuid.uuid4(), states)


def error_of(replicas: ReplicaManager, name: str, partition: int) -> ErrorCode | None:
    try:
        replicas.get(name, partition)
    except KafkaError as error:
        return error.code
    return None


def run(
    tmp_path: Path,
    scenario: Callable[[ReplicaManager, MetadataImage], Awaitable[None]],
    *log_dirs: str,
) -> None:
    """``scenario`` on a started manager (no topics yet) over ``log_dirs`` (default one)."""
    logs = LogManager(*(tmp_path / name for name in log_dirs or ("logs",)))
    logs.load()
    replicas = ReplicaManager(NODE, logs, lambda _: LogConfig())
    empty = MetadataImage("c", NODE)
    replicas.apply(None, empty)

    async def main() -> None:
        try:
            await scenario(replicas, empty)
        finally:
            await replicas.stop()

    try:
        asyncio.run(main())
    finally:
        logs.close_all()


def test_a_large_topic_gets_its_logs_in_batches_while_the_loop_turns(tmp_path: Path) -> None:
    async def scenario(replicas: ReplicaManager, empty: MetadataImage) -> None:
        followed: list[int] = []
        replicas.on_follow_change(lambda image, keys: followed.append(len(keys)))
        async with counting_turns() as turns:
            image = empty.with_topic(topic("wide", MANY))
            replicas.apply(empty, image)
            assert error_of(replicas, "wide", INLINE_NEW_LOGS - 1) is None  # made at once
            assert error_of(replicas, "wide", MANY - 1) is ErrorCode.not_leader_or_follower
            await replicas.settled(0)  # no wait
            assert error_of(replicas, "wide", MANY - 1) is ErrorCode.not_leader_or_follower
            await replicas.settled(60)
        assert all(error_of(replicas, "wide", p) is None for p in range(MANY))
        assert replicas.get("wide", MANY - 1).is_leader
        assert replicas.get("wide", MANY - 1).log.latest_epoch == 1
        assert turns.count > 4 * 3  # the loop turned while each batch was made
        assert len(followed) >= 4  # followers were told of each batch served

    run(tmp_path, scenario)


def test_replicas_unassigned_while_their_logs_are_made_leave_no_log(tmp_path: Path) -> None:
    async def scenario(replicas: ReplicaManager, empty: MetadataImage) -> None:
        image = empty.with_topic(topic("brief", MANY))
        replicas.apply(empty, image)
        await asyncio.sleep(0)  # the first batch is under way
        replicas.apply(image, empty)
        await replicas.settled(60)
        assert error_of(replicas, "brief", MANY - 1) is ErrorCode.unknown_topic_or_partition
        assert not list((tmp_path / "logs").glob("brief-*"))

        # deleted and created again while its logs are made: the new topic gets new logs
        again = empty.with_topic(topic("again", MANY))
        replicas.apply(empty, again)
        await asyncio.sleep(0)
        recreated = topic("again", MANY // 2)
        replicas.apply(again, empty)
        replicas.apply(empty, empty.with_topic(recreated))
        await replicas.settled(60)
        assert sorted(p.key.partition for p in replicas) == list(range(MANY // 2))
        assert len(list((tmp_path / "logs").glob("again-*"))) == MANY // 2

    run(tmp_path, scenario)


def test_stopping_finishes_the_batch_under_way_and_makes_no_more(tmp_path: Path) -> None:
    async def scenario(replicas: ReplicaManager, empty: MetadataImage) -> None:
        replicas.apply(empty, empty.with_topic(topic("cut", MANY)))
        await asyncio.sleep(0)
        await replicas.stop()
        made = len(list((tmp_path / "logs").glob("cut-*")))
        assert INLINE_NEW_LOGS <= made <= INLINE_NEW_LOGS + NEW_LOGS_PER_BATCH
        await asyncio.sleep(0.2)
        assert len(list((tmp_path / "logs").glob("cut-*"))) == made

    run(tmp_path, scenario)


def test_new_logs_spread_over_the_log_dirs(tmp_path: Path) -> None:
    async def scenario(replicas: ReplicaManager, empty: MetadataImage) -> None:
        replicas.apply(empty, empty.with_topic(topic("spread", MANY)))
        await replicas.settled(60)
        counts = [len(list((tmp_path / d).glob("spread-*"))) for d in ("a", "b")]
        assert sum(counts) == MANY and abs(counts[0] - counts[1]) <= 1, counts

    run(tmp_path, scenario, "a", "b")


@pytest.mark.parametrize("blocked", [0, MANY - 1], ids=["on the loop", "off the loop"])
def test_a_log_that_cannot_be_made_takes_its_dir_offline(tmp_path: Path, blocked: int) -> None:
    async def scenario(replicas: ReplicaManager, empty: MetadataImage) -> None:
        told: list[None] = []
        replicas.on_offline_replicas(lambda: told.append(None))
        (tmp_path / "logs" / f"bad-{blocked}").write_text("a file where its directory goes")
        replicas.apply(empty, empty.with_topic(topic("bad", MANY)))
        await replicas.settled(60)
        assert error_of(replicas, "bad", blocked) is ErrorCode.kafka_storage_error
        assert PartitionKey("bad", blocked) in replicas.offline_replicas()
        assert told
        assert replicas.offline_log_dirs == {tmp_path / "logs"}

    run(tmp_path, scenario)
