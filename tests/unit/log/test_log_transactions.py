"""Transactions in a partition log: open ones hold the last stable offset back, markers
complete them, aborted ones are indexed in their marker's segment (``.txnindex``) for
read_committed fetches, and all of it survives restarts, crashes, replication and
truncation."""

from __future__ import annotations

import pytest
from batch_builder import keyed_batch
from kafka.record.default_records import DefaultRecordBatchBuilder
from log_testing import OpenLog, abandon, read_batches, read_records, region_bytes

from odradek.broker.log import LogCleaner, PartitionLog
from odradek.broker.log.log_config import LogConfig
from odradek.broker.log.transaction_index import AbortedTxn
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.records import TRANSACTIONAL_MASK, iter_batches
from odradek.broker.protocol.transaction_markers import (
    MarkerType,
    TransactionMarker,
    decode_marker,
    encode_marker,
)

EPOCH = 0  # the leader epoch every append is made in


def txn_batch(producer_id: int, sequence: int, count: int = 2, epoch: int = 0) -> bytes:
    """A transactional batch, as kafka-python's builder makes it."""
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=True, producer_id=producer_id,
        producer_epoch=epoch, base_sequence=sequence, batch_size=1 << 30,
    )  # fmt: skip
    for i in range(count):
        builder.append(i, timestamp=1_700_000_000_000, key=b"k%d" % i, value=b"v", headers=[])
    return bytes(builder.build())


def marker(
    producer_id: int, kind: MarkerType, epoch: int = 0, coordinator: int = 0
) -> TransactionMarker:
    return TransactionMarker(producer_id, epoch, kind, coordinator)


def replicated(log: PartitionLog) -> PartitionLog:
    log.high_watermark = log.log_end_offset
    return log


def test_an_open_transaction_holds_the_lso_at_its_first_offset_until_it_commits(
    open_log: OpenLog,
) -> None:
    log = open_log()
    log.append_as_leader(txn_batch(7, 0), EPOCH)  # offsets 0-1
    log.append_as_leader(txn_batch(7, 2), EPOCH)  # 2-3
    replicated(log)
    assert (log.high_watermark, log.last_stable_offset) == (4, 0)
    info = log.append_marker(marker(7, MarkerType.COMMIT), EPOCH)
    assert info.first_offset == info.last_offset == 4
    assert log.last_stable_offset == 0  # until the marker itself is replicated
    replicated(log)
    assert log.last_stable_offset == 5
    assert log.aborted_transactions(0, 5) == []
    [*_, stored] = iter_batches(region_bytes(log.read(4, 1 << 20)))
    assert stored.is_control and stored.base_offset == 4


def test_an_aborted_transaction_is_indexed_in_its_markers_segment(open_log: OpenLog) -> None:
    log = open_log()
    log.append_as_leader(txn_batch(7, 0), EPOCH)  # 0-1: producer 7
    log.append_as_leader(txn_batch(8, 0), EPOCH)  # 2-3: producer 8
    log.append_marker(marker(7, MarkerType.ABORT), EPOCH)  # 4
    replicated(log)
    assert log.last_stable_offset == 2  # producer 8's transaction is still open
    # the entry's LSO is where producer 8's open transaction starts
    assert log.aborted_transactions(0, 5) == [AbortedTxn(7, 0, 4, 2)]
    assert log.aborted_transactions(5, 6) == []  # entirely before the fetch
    assert (log.directory / "00000000000000000000.txnindex").stat().st_size == 34
    log.append_marker(marker(8, MarkerType.ABORT), EPOCH)  # 5
    replicated(log)
    assert log.last_stable_offset == 6
    assert log.aborted_transactions(3, 6) == [AbortedTxn(7, 0, 4, 2), AbortedTxn(8, 2, 5, 6)]


def test_a_marker_without_an_open_transaction_completes_nothing(open_log: OpenLog) -> None:
    log = replicated(open_log())
    log.append_marker(marker(9, MarkerType.ABORT), EPOCH)
    replicated(log)
    assert log.aborted_transactions(0, 1) == []
    assert log.last_stable_offset == 1
    assert log.producers[9].epoch == 0 and not log.producers[9].in_transaction


def test_a_producer_with_an_open_transaction_cannot_write_outside_it(open_log: OpenLog) -> None:
    log = open_log()
    log.append_as_leader(txn_batch(7, 0), EPOCH)
    plain = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=False, producer_id=7, producer_epoch=0,
        base_sequence=2, batch_size=1 << 30,
    )  # fmt: skip
    plain.append(0, timestamp=1_700_000_000_000, key=None, value=b"v", headers=[])
    with pytest.raises(KafkaError) as refused:
        log.append_as_leader(bytes(plain.build()), EPOCH)
    assert refused.value.code is ErrorCode.invalid_txn_state


def test_fenced_markers_are_refused(open_log: OpenLog) -> None:
    log = open_log()
    log.append_as_leader(txn_batch(7, 0, epoch=3), EPOCH)
    with pytest.raises(KafkaError) as old_epoch:
        log.append_marker(marker(7, MarkerType.ABORT, epoch=2), EPOCH)
    assert old_epoch.value.code is ErrorCode.invalid_producer_epoch
    log.append_marker(marker(7, MarkerType.ABORT, epoch=4, coordinator=5), EPOCH)
    with pytest.raises(KafkaError) as old_coordinator:
        log.append_marker(marker(7, MarkerType.COMMIT, epoch=4, coordinator=4), EPOCH)
    assert old_coordinator.value.code is ErrorCode.transaction_coordinator_fenced


def test_clients_cannot_write_control_batches(open_log: OpenLog) -> None:
    log = open_log()
    with pytest.raises(KafkaError) as refused:
        log.append_as_leader(encode_marker(marker(7, MarkerType.COMMIT), 0), EPOCH)
    assert refused.value.code is ErrorCode.invalid_record


@pytest.mark.parametrize("clean", [True, False])
def test_open_and_aborted_transactions_survive_a_restart(open_log: OpenLog, clean: bool) -> None:
    log = open_log()
    log.append_as_leader(txn_batch(7, 0), EPOCH)  # 0-1
    log.append_as_leader(txn_batch(8, 0), EPOCH)  # 2-3
    log.append_marker(marker(7, MarkerType.ABORT), EPOCH)  # 4
    replicated(log)
    log.checkpoint()
    if clean:
        log.close()
    else:
        abandon(log)
    again = open_log()
    assert again.last_stable_offset == 2
    assert again.producers[8].txn_first_offset == 2
    assert again.aborted_transactions(0, 5) == [AbortedTxn(7, 0, 4, 2)]
    again.append_marker(marker(8, MarkerType.COMMIT), EPOCH)
    replicated(again)
    assert again.last_stable_offset == 6


def test_a_crash_that_lost_the_index_entry_rebuilds_it(open_log: OpenLog) -> None:
    log = open_log()
    log.append_as_leader(txn_batch(7, 0), EPOCH)
    log.append_marker(marker(7, MarkerType.ABORT), EPOCH)
    replicated(log)
    log.checkpoint()
    abandon(log)
    (log.directory / "00000000000000000000.txnindex").write_bytes(b"\x00" * 10)  # torn
    (log.directory / "partition-offsets-checkpoint").unlink()  # recover from the start
    again = open_log()
    assert again.aborted_transactions(0, 3) == [AbortedTxn(7, 0, 2, 3)]


def test_a_follower_copying_the_leaders_batches_has_the_same_transactions(
    open_log: OpenLog,
) -> None:
    leader = open_log()
    leader.append_as_leader(txn_batch(7, 0), EPOCH)
    leader.append_as_leader(txn_batch(8, 0), EPOCH)
    leader.append_marker(marker(7, MarkerType.ABORT), EPOCH)
    data = region_bytes(leader.read(0, 1 << 20))
    follower = open_log(directory=leader.directory.parent / "follower-0")
    follower.append_as_follower(data)
    replicated(follower)
    assert follower.last_stable_offset == 2
    assert follower.aborted_transactions(0, 5) == [AbortedTxn(7, 0, 4, 2)]


def test_truncation_reopens_a_transaction_whose_marker_it_removed(open_log: OpenLog) -> None:
    log = open_log()
    log.append_as_leader(txn_batch(7, 0), EPOCH)
    log.append_marker(marker(7, MarkerType.ABORT), EPOCH)  # 2
    log.truncate_to(2)
    assert log.producers[7].in_transaction
    assert log.aborted_transactions(0, 2) == []
    assert (log.directory / "00000000000000000000.txnindex").stat().st_size == 0
    replicated(log)
    assert log.last_stable_offset == 0


def test_markers_in_a_later_segment_are_indexed_there(open_log: OpenLog) -> None:
    log = open_log(LogConfig(segment_bytes=200))
    log.append_as_leader(txn_batch(7, 0), EPOCH)
    log.append_as_leader(txn_batch(8, 0), EPOCH)
    info = log.append_marker(marker(7, MarkerType.ABORT), EPOCH)
    assert log.segment_count > 1
    marker_segment = log.segments[-1]
    assert marker_segment.base_offset <= info.first_offset
    assert marker_segment.txn_index.entries == (AbortedTxn(7, 0, info.first_offset, 2),)
    assert decode_marker(region_bytes(log.read(info.first_offset, 1 << 20))) is not None


# --- compaction --------------------------------------------------------------------------------

OLD = 1_700_000_000_000 - 3_600_000
NOW = 1_700_000_000_000
RETENTION_MS = 60_000  # delete.retention.ms of these logs


def compacting() -> LogConfig:
    return LogConfig(
        segment_bytes=300,
        index_interval_bytes=100,
        cleanup_policy=("compact",),
        min_cleanable_dirty_ratio=0.0,
        delete_retention_ms=RETENTION_MS,
    )


def keyed(key: bytes, value: bytes, producer_id: int = -1, sequence: int = -1) -> bytes:
    transactional = producer_id >= 0
    return keyed_batch(
        [(key, value)],
        timestamp=OLD,
        producer_id=producer_id,
        producer_epoch=0 if transactional else -1,
        base_sequence=sequence,
        attributes=TRANSACTIONAL_MASK if transactional else 0,
    )


def values_of(log: PartitionLog, key: bytes) -> list[bytes | None]:
    return [r.value for r in read_records(log) if r.key == key]


def seal_more(log: PartitionLog) -> None:
    """Dirty sealed segments after what the log holds, so the cleaner runs again."""
    for _ in range(3):
        log.append_as_leader(keyed(b"z", b"y" * 200), EPOCH)
    replicated(log)


def control_batches(log: PartitionLog) -> list[tuple[int, int | None]]:
    """(offset, delete horizon) of each control batch in the log."""
    return [
        (header.base_offset, header.delete_horizon_ms)
        for header in read_batches(log, log.log_start_offset)
        if header.is_control
    ]


def test_an_aborted_transactions_data_goes_then_its_marker_past_the_delete_horizon(
    open_log: OpenLog,
) -> None:
    log = open_log(compacting())
    log.append_as_leader(keyed(b"a", b"committed"), EPOCH)  # 0
    log.append_as_leader(keyed(b"a", b"aborted", producer_id=7, sequence=0), EPOCH)  # 1
    log.append_marker(marker(7, MarkerType.ABORT), EPOCH)  # 2
    seal_more(log)
    entry = AbortedTxn(7, 1, 2, 3)
    assert log.aborted_transactions(0, 3) == [entry]

    LogCleaner().clean(log, NOW)  # the data goes; the marker guarded it, with its entry
    assert log.cleaned_up_to > 2
    assert values_of(log, b"a") == [b"committed"]  # never superseded by the aborted value
    assert control_batches(log) == [(2, None)]
    assert log.aborted_transactions(0, 3) == [entry]

    seal_more(log)
    LogCleaner().clean(log, NOW)  # it guards nothing now: stamped, its entry dropped
    assert control_batches(log) == [(2, NOW + RETENTION_MS)]
    assert log.aborted_transactions(0, 3) == []

    seal_more(log)
    LogCleaner().clean(log, NOW + RETENTION_MS - 1)  # kept until the horizon
    assert control_batches(log) == [(2, NOW + RETENTION_MS)]
    seal_more(log)
    LogCleaner().clean(log, NOW + RETENTION_MS)
    assert control_batches(log) == []
    assert values_of(log, b"a") == [b"committed"]


def test_a_commit_marker_stays_while_its_transaction_keeps_data(open_log: OpenLog) -> None:
    log = open_log(compacting())
    log.append_as_leader(keyed(b"a", b"first", producer_id=7, sequence=0), EPOCH)  # 0
    log.append_marker(marker(7, MarkerType.COMMIT), EPOCH)  # 1
    log.append_as_leader(keyed(b"b", b"kept", producer_id=8, sequence=0), EPOCH)  # 2
    log.append_marker(marker(8, MarkerType.COMMIT), EPOCH)  # 3
    log.append_as_leader(keyed(b"a", b"second"), EPOCH)  # 4: supersedes producer 7's record
    seal_more(log)

    for _ in range(3):
        LogCleaner().clean(log, NOW)
        seal_more(log)
    # producer 7's data is gone, so its marker got a horizon; producer 8's stays as it was
    assert control_batches(log) == [(1, NOW + RETENTION_MS), (3, None)]
    LogCleaner().clean(log, NOW + RETENTION_MS)
    assert control_batches(log) == [(3, None)]
    assert values_of(log, b"a") == [b"second"] and values_of(log, b"b") == [b"kept"]


def test_aborted_data_whose_marker_is_not_yet_cleanable_supersedes_nothing(
    open_log: OpenLog,
) -> None:
    log = open_log(compacting())
    log.append_as_leader(keyed(b"a", b"committed"), EPOCH)  # 0
    log.append_as_leader(keyed(b"a", b"aborted", producer_id=7, sequence=0), EPOCH)  # 1
    for _ in range(2):  # seal the data...
        log.append_as_leader(keyed(b"z", b"y" * 200), EPOCH)
    log.append_marker(marker(7, MarkerType.ABORT), EPOCH)  # ...the marker in the active one
    replicated(log)
    LogCleaner().clean(log, NOW)
    assert log.cleaned_up_to > 1
    assert values_of(log, b"a") == [b"committed"]
    assert len(log.aborted_transactions(0, log.log_end_offset)) == 1  # its own segment's


def test_the_cleaner_stops_before_an_open_transaction(open_log: OpenLog) -> None:
    log = open_log(compacting())
    log.append_as_leader(keyed(b"a", b"first"), EPOCH)  # 0
    log.append_as_leader(keyed(b"a", b"open", producer_id=7, sequence=0), EPOCH)  # 1
    for _ in range(3):
        log.append_as_leader(keyed(b"z", b"y" * 200), EPOCH)
    replicated(log)
    assert log.last_stable_offset == 1
    LogCleaner().clean(log, NOW)
    assert log.cleaned_up_to <= 1
    assert values_of(log, b"a") == [b"first", b"open"]
