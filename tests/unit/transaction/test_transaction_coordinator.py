"""The transaction coordinator over real partition logs (no sockets): a transaction's life,
its markers in the data partitions, reloading from ``__transaction_state`` (finishing a
prepared transaction), fencing and timeouts."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder
from one_broker import one_broker

from odradek.broker.cluster.internal_topics import InternalTopic
from odradek.broker.cluster.peer_pool import PeerPool
from odradek.broker.cluster.peer_security import PLAINTEXT
from odradek.broker.cluster.replica_manager import ReplicaManager
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.transaction.coordinator import AbortReason, TransactionCoordinator
from odradek.broker.transaction.marker_writer import MarkerWriter
from odradek.broker.transaction.transaction_config import TRANSACTION_STATE_TOPIC, TransactionConfig
from odradek.broker.transaction.transaction_log_format import TransactionState

TOPIC = "orders"
S = TransactionState
TV1 = 0


def config(**changes: int) -> TransactionConfig:
    topic = InternalTopic(TRANSACTION_STATE_TOPIC, 3, 1, "transaction.state.log.replication.factor",
                          {"cleanup.policy": "compact"})  # fmt: skip
    settings: dict[str, Any] = {
        "topic": topic,
        "min_insync": 1,
        "max_timeout_ms": 900_000,
        "id_expiration_ms": 604_800_000,
        "abort_timed_out_interval_ms": 20,
        "remove_expired_interval_ms": 3_600_000,
        "write_timeout_ms": 2000,
    }
    return TransactionConfig(**{**settings, **changes})


class Clock:
    def __init__(self) -> None:
        self.now = 1_700_000_000.0

    def __call__(self) -> float:
        return self.now


@asynccontextmanager
async def running(
    data_dir: Path, clock: Clock | None = None, **changes: int
) -> AsyncIterator[tuple[TransactionCoordinator, ReplicaManager]]:
    async with one_broker(data_dir, TOPIC) as broker:
        store, replicas = broker.store, broker.replicas
        ids = itertools.count(5000)

        async def allocate() -> int:
            return next(ids)

        peers = PeerPool(store, 2.0, PLAINTEXT)
        markers = MarkerWriter(0, store, replicas, lambda topic: 1, 2.0, peers, lambda *_: None)
        coordinator = TransactionCoordinator(config(**changes), store, replicas, allocate,
                                             markers, clock or Clock())  # fmt: skip
        coordinator.start()
        await coordinator.find_coordinator("any")  # makes __transaction_state
        while coordinator.partitions.loading:
            await asyncio.sleep(0.001)
        try:
            yield coordinator, replicas
        finally:
            await coordinator.stop()
            peers.close()


def run(test: Callable[..., Awaitable[Any]], *args: Any) -> Any:
    return asyncio.run(asyncio.wait_for(test(*args), 20))


def produce(replicas: ReplicaManager, producer: tuple[int, int], partition: int, seq: int) -> None:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=True, producer_id=producer[0],
        producer_epoch=producer[1], base_sequence=seq, batch_size=1 << 20,
    )  # fmt: skip
    builder.append(0, timestamp=1_700_000_000_000, key=None, value=b"v", headers=[])
    replicas.get(TOPIC, partition).append_as_leader(bytes(builder.build()), -1, 1)


async def until_idle(
    coordinator: TransactionCoordinator, transactional_id: str
) -> TransactionState:
    """The id's state once it is neither open nor completing."""
    for _ in range(2000):
        try:
            state = coordinator.describe(transactional_id).state
        except KafkaError as error:  # the id's partition is still loading
            assert error.code is ErrorCode.coordinator_load_in_progress
        else:
            if state not in (S.ONGOING, S.PREPARE_COMMIT, S.PREPARE_ABORT):
                return state
        await asyncio.sleep(0.005)
    raise AssertionError("still completing")


def test_a_committed_transaction_marks_its_partitions_and_completes(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running(tmp_path) as (coordinator, replicas):
            producer = await coordinator.init_producer_id("app", 60000, None)
            assert producer[1] == 0
            await coordinator.add_partitions("app", producer, [(TOPIC, 0), (TOPIC, 1)], TV1)
            assert coordinator.describe("app").state is S.ONGOING
            produce(replicas, producer, 0, 0)
            produce(replicas, producer, 1, 0)
            data = replicas.get(TOPIC, 0)
            assert data.last_stable_offset == 0
            await coordinator.end_transaction("app", producer, commit=True, client_version=TV1)
            assert await until_idle(coordinator, "app") is S.COMPLETE_COMMIT
            assert data.last_stable_offset == data.high_watermark == 2  # record + marker
            assert replicas.get(TOPIC, 1).last_stable_offset == 2
            assert data.aborted_transactions(0, 2) == []
            # a retried EndTxn is answered as done; the other outcome is refused
            await coordinator.end_transaction("app", producer, commit=True, client_version=TV1)
            with pytest.raises(KafkaError) as refused:
                await coordinator.end_transaction("app", producer, commit=False, client_version=TV1)
            assert refused.value.code is ErrorCode.invalid_txn_state

    run(scenario)


def test_an_aborted_transaction_is_indexed_where_it_was_written(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running(tmp_path) as (coordinator, replicas):
            producer = await coordinator.init_producer_id("app", 60000, None)
            await coordinator.add_partitions("app", producer, [(TOPIC, 0)], TV1)
            produce(replicas, producer, 0, 0)
            await coordinator.end_transaction("app", producer, commit=False, client_version=TV1)
            assert await until_idle(coordinator, "app") is S.COMPLETE_ABORT
            [aborted] = replicas.get(TOPIC, 0).aborted_transactions(0, 2)
            assert (aborted.producer_id, aborted.first_offset) == (producer[0], 0)

    run(scenario)


def test_a_new_init_fences_the_old_producer_and_aborts_its_transaction(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running(tmp_path) as (coordinator, replicas):
            zombie = await coordinator.init_producer_id("app", 60000, None)
            await coordinator.add_partitions("app", zombie, [(TOPIC, 0)], TV1)
            produce(replicas, zombie, 0, 0)
            with pytest.raises(KafkaError) as busy:
                await coordinator.init_producer_id("app", 60000, None)
            assert busy.value.code is ErrorCode.concurrent_transactions
            assert await until_idle(coordinator, "app") is S.COMPLETE_ABORT
            fresh = await coordinator.init_producer_id("app", 60000, None)
            assert fresh == (zombie[0], zombie[1] + 2)  # fenced once, bumped again
            with pytest.raises(KafkaError) as fenced:
                await coordinator.add_partitions("app", zombie, [(TOPIC, 0)], TV1)
            assert fenced.value.code is ErrorCode.producer_fenced
            # the zombie's data is aborted, and its late writes are refused by the partition
            [aborted] = replicas.get(TOPIC, 0).aborted_transactions(0, 2)
            assert aborted.producer_id == zombie[0]
            with pytest.raises(KafkaError) as late:
                produce(replicas, zombie, 0, 1)
            assert late.value.code is ErrorCode.invalid_producer_epoch

    run(scenario)


def test_a_transaction_past_its_timeout_is_aborted(tmp_path: Path) -> None:
    clock = Clock()

    async def scenario() -> None:
        async with running(tmp_path, clock) as (coordinator, replicas):
            producer = await coordinator.init_producer_id("app", 1000, None)
            await coordinator.add_partitions("app", producer, [(TOPIC, 0)], TV1)
            produce(replicas, producer, 0, 0)
            clock.now += 2
            assert await until_idle(coordinator, "app") is S.COMPLETE_ABORT
            assert coordinator.describe("app").producer_epoch == producer[1] + 1

    run(scenario)


def test_state_is_reloaded_and_a_prepared_transaction_finished(tmp_path: Path) -> None:
    async def first() -> tuple[int, int]:
        async with running(tmp_path) as (coordinator, replicas):
            producer = await coordinator.init_producer_id("app", 60000, None)
            await coordinator.add_partitions("app", producer, [(TOPIC, 0)], TV1)
            produce(replicas, producer, 0, 0)
            current = coordinator.transactions["app"]
            # written as prepared, as a coordinator that died before its markers leaves it
            prepared = replace(current, state=S.PREPARE_COMMIT)
            await coordinator._write("app", prepared)
            return producer

    async def second(producer: tuple[int, int]) -> None:
        async with running(tmp_path) as (coordinator, replicas):
            assert await until_idle(coordinator, "app") is S.COMPLETE_COMMIT
            assert replicas.get(TOPIC, 0).last_stable_offset == 2
            assert coordinator.describe("app").producer_id == producer[0]

    producer = run(first)
    run(second, producer)


def test_a_timeout_beyond_the_maximum_is_refused(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with running(tmp_path, max_timeout_ms=5000) as (coordinator, _):
            with pytest.raises(KafkaError) as refused:
                await coordinator.init_producer_id("app", 6000, None)
            assert refused.value.code is ErrorCode.invalid_transaction_timeout

    run(scenario)


def test_an_idle_id_expires_and_stays_forgotten_after_a_reload(tmp_path: Path) -> None:
    clock = Clock()

    async def first() -> tuple[int, int]:
        async with running(tmp_path, clock, id_expiration_ms=10_000) as (coordinator, _):
            idle = await coordinator.init_producer_id("idle", 60000, None)
            busy = await coordinator.init_producer_id("busy", 60000, None)
            await coordinator.add_partitions("busy", busy, [(TOPIC, 0)], TV1)
            clock.now += 11
            await coordinator.remove_expired()
            with pytest.raises(KafkaError) as gone:
                coordinator.describe("idle")
            assert gone.value.code is ErrorCode.transactional_id_not_found
            assert coordinator.describe("busy").state is S.ONGOING  # an open one never expires
            return idle

    async def second() -> None:
        async with running(tmp_path, clock, id_expiration_ms=10_000) as (coordinator, _):
            assert coordinator.describe("busy").state is S.ONGOING
            with pytest.raises(KafkaError) as gone:
                coordinator.describe("idle")
            assert gone.value.code is ErrorCode.transactional_id_not_found
            # afresh: a remembered id would have its epoch bumped
            assert (await coordinator.init_producer_id("idle", 60000, None))[1] == 0

    assert run(first)[1] == 0
    run(second)


def test_commits_and_aborts_are_counted_by_reason_and_open_transactions_aged(
    tmp_path: Path,
) -> None:
    clock = Clock()

    async def transaction(coordinator: TransactionCoordinator, tid: str, timeout_ms: int = 60000
                          ) -> tuple[int, int]:  # fmt: skip
        producer = await coordinator.init_producer_id(tid, timeout_ms, None)
        await coordinator.add_partitions(tid, producer, [(TOPIC, 0)], TV1)
        return producer

    async def scenario() -> None:
        async with running(tmp_path, clock) as (coordinator, _):
            committed = await transaction(coordinator, "committed")
            clock.now += 3
            aborted = await transaction(coordinator, "aborted")
            assert coordinator.open_transaction_ages_ms() == [3000, 0]
            await coordinator.end_transaction(
                "committed", committed, commit=True, client_version=TV1
            )
            await coordinator.end_transaction("aborted", aborted, commit=False, client_version=TV1)
            await transaction(coordinator, "zombie")
            with pytest.raises(KafkaError):
                await coordinator.init_producer_id("zombie", 60000, None)
            await transaction(coordinator, "slow", timeout_ms=1000)
            clock.now += 2
            for tid in ("committed", "aborted", "zombie", "slow"):
                await until_idle(coordinator, tid)
            assert coordinator.open_transaction_ages_ms() == []
            assert coordinator.commits == 1
            assert coordinator.aborts == {
                AbortReason.CLIENT: 1, AbortReason.FENCED: 1, AbortReason.TIMEOUT: 1
            }  # fmt: skip

    run(scenario)


def test_version_2_ends_with_a_bumped_epoch_that_fences_the_finished_transaction(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        async with running(tmp_path) as (coordinator, replicas):
            producer = await coordinator.init_producer_id("app", 60000, None)
            await coordinator.add_partitions("app", producer, [(TOPIC, 0)], client_version=2)
            produce(replicas, producer, 0, 0)
            next_producer = await coordinator.end_transaction(
                "app", producer, commit=True, client_version=2
            )
            assert next_producer == (producer[0], producer[1] + 1)
            assert await until_idle(coordinator, "app") is S.COMPLETE_COMMIT
            assert coordinator.describe("app").client_version == 2
            data = replicas.get(TOPIC, 0)
            assert data.last_stable_offset == 2  # the marker went out with the new epoch
            with pytest.raises(KafkaError) as late:  # a late batch of the finished transaction
                produce(replicas, producer, 0, 1)
            assert late.value.code is ErrorCode.invalid_producer_epoch
            # a retried EndTxn gets the same answer; the next transaction uses the new epoch
            assert await coordinator.end_transaction("app", producer, True, 2) == next_producer
            await coordinator.add_partitions("app", next_producer, [(TOPIC, 0)], 2)
            produce(replicas, next_producer, 0, 0)
            assert data.last_stable_offset == 2

    run(scenario)
