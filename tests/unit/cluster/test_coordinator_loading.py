"""A coordinator's state is loaded from its partition without stalling the event loop.

Reading a large ``__consumer_offsets`` partition once took the loop for seconds, long
enough for the broker to lose its etcd session. Now the records are decoded and replayed
in a worker thread while the loop reads the log a chunk at a time, so the loop turns
between chunks; and a log appended to while it was read is read again, so the state
installed is that of the whole log. A load that fails is tried again while the broker
leads the partition (it once stayed "loading" until leadership moved).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest
from loop_turns import counting_turns
from one_broker import one_broker

from odradek.broker.cluster import coordinator_partitions
from odradek.broker.cluster.coordinator_log import (
    READ_CHUNK_BYTES,
    LoggedItem,
    LoggedRecord,
    load_state,
)
from odradek.broker.cluster.metadata_image import PartitionState
from odradek.broker.cluster.partition import Partition, PartitionKey
from odradek.broker.log import LogConfig, PartitionLog
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.record_codec import BatchSpec, Record, encode_batch

LEADER = 0
VALUE = b"v" * 1000
LOADER = ThreadPoolExecutor(1)


def sole_leader(tmp_path: Path) -> Partition:
    log = PartitionLog.open(tmp_path / "__consumer_offsets-0", LogConfig())
    state = PartitionState(0, (LEADER,), LEADER, 1, (LEADER,))
    return Partition(PartitionKey("__consumer_offsets", 0), log, state, LEADER)


def append(partition: Partition, keys: Iterable[bytes]) -> None:
    records = [Record(i, 0, key, VALUE) for i, key in enumerate(keys)]
    partition.append_as_leader(encode_batch(BatchSpec(records=records)), -1, 1)


def keys_loaded(
    seen: list[bytes], on_read: Callable[[], None] = lambda: None
) -> Callable[[PartitionKey, Iterable[LoggedItem]], Callable[[], None]]:
    """A load function that collects the keys it reads, calling ``on_read`` at the end."""

    def load(key: PartitionKey, records: Iterable[LoggedItem]) -> Callable[[], None]:
        assert threading.current_thread() is not threading.main_thread()
        keys = [item.key for item in records if isinstance(item, LoggedRecord)]
        on_read()
        return lambda: seen.extend(keys)

    return load


def test_the_loop_turns_while_a_partition_of_many_chunks_loads(tmp_path: Path) -> None:
    partition = sole_leader(tmp_path)
    batches = 4 * READ_CHUNK_BYTES // (100 * len(VALUE))
    for batch in range(batches):
        append(partition, (f"{batch}-{i}".encode() for i in range(100)))

    async def scenario() -> int:
        async with counting_turns() as turns:
            await asyncio.sleep(0)
            before = turns.count
            seen: list[bytes] = []
            install = await load_state(partition, keys_loaded(seen), LOADER)
            install()
        assert len(seen) == batches * 100
        return turns.count - before

    # one turn at least per chunk read (four of them); a load on the loop allows one
    assert asyncio.run(scenario()) > 4


def test_records_appended_while_the_log_is_read_are_in_the_state_installed(
    tmp_path: Path,
) -> None:
    partition = sole_leader(tmp_path)
    append(partition, [b"first"])

    async def scenario() -> list[bytes]:
        loop = asyncio.get_running_loop()
        appended = False

        def append_once_on_the_loop() -> None:  # as a transaction marker lands meanwhile
            nonlocal appended
            if not appended:
                appended = True
                done = asyncio.run_coroutine_threadsafe(append_later(), loop)
                done.result()

        async def append_later() -> None:
            append(partition, [b"second"])

        seen: list[bytes] = []
        install = await load_state(partition, keys_loaded(seen, append_once_on_the_loop), LOADER)
        install()
        return seen

    assert asyncio.run(scenario()) == [b"first", b"second"]


def test_a_load_that_fails_is_tried_again_while_the_partition_is_led(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(coordinator_partitions, "LOAD_RETRY_S", 0.05)
    attempts: list[PartitionKey] = []

    def load(key: PartitionKey, records: Iterable[LoggedItem]) -> Callable[[], None]:
        attempts.append(key)
        if len(attempts) == 1:
            raise OSError(5, "a read failed")
        return lambda: None

    async def scenario() -> None:
        async with one_broker(tmp_path, "coordinated", partitions=1) as broker:
            partitions = coordinator_partitions.CoordinatorPartitions(
                "coordinated", broker.store, broker.replicas, lambda key, count: 0, load,
                lambda index: None, lambda: 1, 1000,
            )  # fmt: skip
            partitions.start()
            with pytest.raises(KafkaError) as loading:
                partitions.check_owned("a group")
            assert loading.value.code is ErrorCode.coordinator_load_in_progress
            async with asyncio.timeout(5):
                while partitions.loading:
                    await asyncio.sleep(0.01)
            partitions.check_owned("a group")
            assert len(attempts) == 2
            await partitions.close()

    asyncio.run(scenario())


def test_a_broker_fenced_in_place_keeps_its_state_and_serves_it_again_unfenced(
    tmp_path: Path,
) -> None:
    """A lapsed etcd session fences the broker while the metadata still names it leader:
    its keys get NOT_COORDINATOR meanwhile, and back at the same epoch it serves the state
    it loaded, without reading the log again; a leadership that moved unloads it."""
    loads: list[PartitionKey] = []
    unloads: list[int] = []

    def load(key: PartitionKey, records: Iterable[LoggedItem]) -> Callable[[], None]:
        loads.append(key)
        return lambda: None

    def owner(partitions: coordinator_partitions.CoordinatorPartitions) -> ErrorCode:
        try:
            partitions.check_owned("a group")
        except KafkaError as error:
            return error.code
        return ErrorCode.none

    async def scenario() -> None:
        async with one_broker(tmp_path, "coordinated", partitions=1) as broker:
            partitions = coordinator_partitions.CoordinatorPartitions(
                "coordinated", broker.store, broker.replicas, lambda key, count: 0, load,
                unloads.append, lambda: 1, 1000,
            )  # fmt: skip
            partitions.start()
            async with asyncio.timeout(5):
                while partitions.loading:
                    await asyncio.sleep(0.01)
            broker.replicas.set_fenced(True)
            assert owner(partitions) is ErrorCode.not_coordinator and unloads == []
            broker.replicas.set_fenced(False)
            assert owner(partitions) is ErrorCode.none and len(loads) == 1

            broker.replicas.set_fenced(True)
            state = broker.store.image.topics["coordinated"].partitions[0]
            moved = replace(state, leader_epoch=state.leader_epoch + 1)
            assert await broker.store.update_partition("coordinated", state, moved)
            broker.replicas.set_fenced(False)
            assert unloads == [0]
            async with asyncio.timeout(5):
                while partitions.loading:
                    await asyncio.sleep(0.01)
            assert owner(partitions) is ErrorCode.none and len(loads) == 2
            await partitions.close()

    asyncio.run(scenario())
