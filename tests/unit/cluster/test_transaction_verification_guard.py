"""KIP-890's guard on a partition leader: a transactional batch that would open a
transaction is appended only under the guard its producer was verified with, and a marker
for that producer (its transaction ended while the coordinator was being asked) withdraws
the guard, so the batch is refused instead of opening a transaction nothing will end.
With transaction version 2 the previous transaction's marker carries the epoch of the next
one, which may be under verification already: that marker leaves its guard alone."""

from __future__ import annotations

from pathlib import Path

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder

from odradek.broker.cluster.metadata_image import PartitionState
from odradek.broker.cluster.partition import Partition, PartitionKey, Verification
from odradek.broker.log import LogConfig, PartitionLog
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.transaction_markers import MarkerType, TransactionMarker

PRODUCER = (4000, 0)


def batch(sequence: int, transactional: bool = True, producer: tuple[int, int] = PRODUCER) -> bytes:
    builder = DefaultRecordBatchBuilder(
        2, 0, transactional, *producer, sequence, batch_size=1 << 20
    )
    builder.append(0, timestamp=1_700_000_000_000, key=None, value=b"x", headers=[])
    return bytes(builder.build())


def leader(tmp_path: Path) -> Partition:
    log = PartitionLog.open(tmp_path / "t-0", LogConfig())
    return Partition(PartitionKey("t", 0), log, PartitionState(0, (0,), 0, 1, (0,)), 0)


def test_the_first_batch_needs_its_guard_and_the_next_ones_none(tmp_path: Path) -> None:
    partition = leader(tmp_path)
    assert partition.transaction_to_verify(batch(0)) == PRODUCER
    assert partition.transaction_to_verify(batch(0, transactional=False)) is None
    with pytest.raises(KafkaError) as unverified:
        partition.append_as_leader(batch(0), -1, 1, Verification())
    assert unverified.value.code is ErrorCode.invalid_txn_state
    guard = partition.verification_guard(*PRODUCER, epoch_bumps=False, base_sequence=0)
    assert (
        partition.verification_guard(*PRODUCER, epoch_bumps=False, base_sequence=0) is guard
    )  # one per verification
    partition.append_as_leader(batch(0), -1, 1, Verification(guard))
    # the transaction is open here now: its later batches need no verification
    assert partition.transaction_to_verify(batch(1)) is None
    partition.append_as_leader(batch(1), -1, 1, Verification())


def test_a_marker_during_the_verification_withdraws_the_guard(tmp_path: Path) -> None:
    partition = leader(tmp_path)
    guard = partition.verification_guard(*PRODUCER, epoch_bumps=False, base_sequence=0)
    partition.append_as_leader(batch(0), -1, 1, Verification(guard))
    assert partition.transaction_to_verify(batch(1)) is None  # open: the next batch joins it

    partition.append_marker(TransactionMarker(*PRODUCER, MarkerType.ABORT, 0), 1)
    # a late batch: verification starts, and the transaction ends before it is appended
    guard = partition.verification_guard(*PRODUCER, epoch_bumps=False, base_sequence=1)
    partition.append_marker(TransactionMarker(*PRODUCER, MarkerType.ABORT, 0), 1)
    with pytest.raises(KafkaError) as withdrawn:
        partition.append_as_leader(batch(1), -1, 1, Verification(guard))
    assert withdrawn.value.code is ErrorCode.invalid_txn_state
    assert partition.log.last_stable_offset == partition.log.log_end_offset


def test_a_version_2_marker_of_the_previous_transaction_keeps_the_next_ones_guard(
    tmp_path: Path,
) -> None:
    partition = leader(tmp_path)
    guard = partition.verification_guard(*PRODUCER, epoch_bumps=True, base_sequence=0)
    partition.append_as_leader(batch(0), -1, 1, Verification(guard))
    # EndTxn bumped the epoch: the next transaction's first batch is verified (it comes with
    # the new epoch while the old transaction is still open here) before the marker lands
    bumped = (PRODUCER[0], PRODUCER[1] + 1)
    assert partition.transaction_to_verify(batch(0, producer=bumped)) == bumped
    next_guard = partition.verification_guard(*bumped, epoch_bumps=True, base_sequence=0)
    partition.append_marker(TransactionMarker(*bumped, MarkerType.COMMIT, 0), 1)
    partition.append_as_leader(batch(0, producer=bumped), -1, 1, Verification(next_guard))
    assert partition.log.last_stable_offset == 2  # the first transaction, and its marker
    # a marker of another epoch (the coordinator fenced the producer) withdraws the guard
    guard = partition.verification_guard(
        bumped[0], bumped[1] + 2, epoch_bumps=True, base_sequence=0
    )
    partition.append_marker(TransactionMarker(bumped[0], bumped[1] + 1, MarkerType.ABORT, 0), 1)
    with pytest.raises(KafkaError) as withdrawn:
        partition.append_as_leader(
            batch(0, producer=(bumped[0], bumped[1] + 2)), -1, 1, Verification(guard)
        )
    assert withdrawn.value.code is ErrorCode.invalid_txn_state


def test_a_batch_after_the_first_one_verified_cannot_open_the_transaction_before_it(
    tmp_path: Path,
) -> None:
    """The first batch of a transaction was verified, then refused (the coordinator was
    still completing the previous transaction); a later batch verified after it must not
    open the transaction before its retry (Kafka: OUT_OF_ORDER_SEQUENCE_NUMBER, "earliest
    seen sequence"), else the retry finds its sequence behind the later one for good."""
    partition = leader(tmp_path)
    partition.verification_guard(*PRODUCER, epoch_bumps=True, base_sequence=0)  # refused
    later = partition.verification_guard(*PRODUCER, epoch_bumps=True, base_sequence=3)
    with pytest.raises(KafkaError) as early:
        partition.append_as_leader(batch(3), -1, 1, Verification(later))
    assert early.value.code is ErrorCode.out_of_order_sequence_number
    retry = partition.verification_guard(*PRODUCER, epoch_bumps=True, base_sequence=0)
    partition.append_as_leader(batch(0), -1, 1, Verification(retry))
    partition.append_as_leader(batch(1), -1, 1, Verification())  # joins the open transaction
    # the next epoch's first batch starts the lowest sequence afresh
    bumped = (PRODUCER[0], PRODUCER[1] + 1)
    fresh = partition.verification_guard(*bumped, epoch_bumps=True, base_sequence=0)
    partition.append_marker(TransactionMarker(*bumped, MarkerType.COMMIT, 0), 1)
    partition.append_as_leader(batch(0, producer=bumped), -1, 1, Verification(fresh))
