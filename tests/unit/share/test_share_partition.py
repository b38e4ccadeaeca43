"""The share-partition state machine: acquisition, acknowledgement, lock expiry,
delivery counts and the state written for it."""

from __future__ import annotations

import pytest

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.share.share_partition import (
    AcknowledgeType,
    AcquiredRange,
    LogBatch,
    SharePartition,
)
from odradek.broker.share.share_state import (
    DeliveryState,
    ShareState,
    StateBatch,
    decode_snapshot,
    encode_snapshot,
)

ACCEPT, RELEASE, REJECT, GAP = (
    AcknowledgeType.ACCEPT,
    AcknowledgeType.RELEASE,
    AcknowledgeType.REJECT,
    AcknowledgeType.GAP,
)


def share(start: int = 0, limit: int = 3, locks: int = 100) -> SharePartition:
    return SharePartition(ShareState(start, 0, 0), limit, locks)


def batches(*ranges: tuple[int, int]) -> list[LogBatch]:
    return [LogBatch(first, last) for first, last in ranges]


def test_new_records_go_out_whole_batches_once_and_accepting_them_moves_the_start() -> None:
    partition = share()
    got = partition.acquire_new("a", batches((0, 4), (5, 9)), 3, deadline=10)
    assert got == [AcquiredRange(0, 4, 1)]  # the whole first batch, past max_records
    assert partition.end_offset == 5
    assert partition.acquire_new("b", batches((5, 9)), 10, deadline=10) == [AcquiredRange(5, 9, 1)]
    partition.acknowledge("a", 0, 4, [ACCEPT], 0)
    assert partition.start_offset == 5
    assert partition.in_flight == 5


def test_exact_mode_hands_out_exactly_max_records() -> None:
    partition = share()
    assert partition.acquire_new("a", batches((0, 9)), 3, 10, exact=True) == [
        AcquiredRange(0, 2, 1)
    ]
    assert partition.acquire_new("b", batches((0, 9)), 3, 10, exact=True) == [
        AcquiredRange(3, 5, 1)
    ]


def test_released_records_are_offered_again_until_the_delivery_limit_archives_them() -> None:
    partition = share(limit=2)
    partition.acquire_new("a", batches((0, 1)), 10, 10)
    partition.acknowledge("a", 0, 1, [RELEASE], 0)
    assert partition.acquire_available("b", 10, 10) == [AcquiredRange(0, 1, 2)]
    partition.acknowledge("b", 0, 1, [RELEASE], 0)  # delivered twice: the limit
    assert partition.acquire_available("c", 10, 10) == []
    assert partition.start_offset == 2  # archived records are done with


def test_rejected_records_are_never_offered_again() -> None:
    partition = share()
    partition.acquire_new("a", batches((0, 2)), 10, 10)
    partition.acknowledge("a", 0, 2, [ACCEPT, REJECT, RELEASE], 0)
    assert partition.start_offset == 2
    assert partition.acquire_available("b", 10, 10) == [AcquiredRange(2, 2, 2)]


def test_expired_locks_release_records_and_count_deliveries() -> None:
    partition = share(limit=2)
    partition.acquire_new("a", batches((0, 0)), 10, deadline=5)
    assert partition.next_deadline() == 5
    assert partition.release_expired(now=4) == 0
    assert partition.release_expired(now=5) == 1
    assert partition.acquire_available("b", 10, deadline=9) == [AcquiredRange(0, 0, 2)]
    partition.release_expired(now=9)
    assert partition.acquire_available("c", 10, 20) == []  # the limit archived it


def test_only_the_member_holding_a_record_acknowledges_it_and_a_refusal_applies_nothing() -> None:
    partition = share()
    partition.acquire_new("a", batches((0, 1)), 10, 10)
    partition.acquire_new("b", batches((2, 2)), 10, 10)
    with pytest.raises(KafkaError) as refused:
        partition.acknowledge("a", 1, 2, [ACCEPT], 0)
    assert refused.value.code is ErrorCode.invalid_record_state
    partition.acknowledge("a", 0, 1, [ACCEPT], 0)  # 1 was not accepted by the refused batch
    assert partition.start_offset == 2


def test_malformed_acknowledgements_are_invalid_requests() -> None:
    partition = share()
    partition.acquire_new("a", batches((0, 2)), 10, 10)
    for first, last, types in ((0, 2, [1, 1]), (2, 0, [1]), (0, 0, [9])):
        with pytest.raises(KafkaError) as refused:
            partition.acknowledge("a", first, last, types, 0)
        assert refused.value.code is ErrorCode.invalid_request


def test_a_member_leaving_releases_only_its_records() -> None:
    partition = share()
    partition.acquire_new("a", batches((0, 1)), 10, 10)
    partition.acquire_new("b", batches((2, 3)), 10, 10)
    assert partition.release_member("a") == 2
    assert partition.acquire_available("c", 10, 10) == [AcquiredRange(0, 1, 2)]


def test_transaction_markers_and_gaps_are_archived() -> None:
    partition = share()
    got = partition.acquire_new("a", [LogBatch(0, 1), LogBatch(2, 2, deliverable=False)], 10, 10)
    assert got == [AcquiredRange(0, 1, 1)]
    assert partition.end_offset == 3
    partition.acknowledge("a", 0, 1, [ACCEPT, GAP], 0)
    assert partition.start_offset == 3


def test_the_in_flight_limit_stops_new_acquisitions() -> None:
    partition = share(locks=3)
    partition.acquire_new("a", batches((0, 2)), 10, 10)
    assert not partition.wants_new_records()
    assert partition.acquire_new("a", batches((3, 5)), 10, 10) == []


def test_the_written_state_reloads_as_the_same_partition() -> None:
    partition = share(start=10)
    partition.acquire_new("a", batches((10, 14)), 10, 10)
    partition.acknowledge("a", 11, 11, [ACCEPT], 0)
    partition.acknowledge("a", 12, 12, [REJECT], 0)
    written = partition.state(leader_epoch=7)
    assert written.start_offset == 10
    assert written.batches == (
        StateBatch(10, 10, DeliveryState.AVAILABLE, 1),
        StateBatch(11, 11, DeliveryState.ACKNOWLEDGED, 1),
        StateBatch(12, 12, DeliveryState.ARCHIVED, 1),
        StateBatch(13, 14, DeliveryState.AVAILABLE, 1),
    )
    reloaded = SharePartition(decode_snapshot(encode_snapshot(written, 0)), 3, 100)
    assert (reloaded.start_offset, reloaded.end_offset) == (10, 15)
    assert reloaded.acquire_available("b", 10, 10) == [
        AcquiredRange(10, 10, 2),
        AcquiredRange(13, 14, 2),
    ]


def test_records_the_log_dropped_are_skipped() -> None:
    partition = share()
    partition.acquire_new("a", batches((0, 4)), 10, 10)
    assert partition.move_start_to(3)
    assert partition.start_offset == 3
    partition.acknowledge("a", 3, 4, [ACCEPT], 0)
    assert partition.start_offset == 5


def test_the_lag_counts_what_is_neither_delivered_nor_done_with() -> None:
    partition = share(start=0)
    partition.acquire_new("a", batches((0, 3)), 10, 10)
    partition.acknowledge("a", 1, 2, [ACCEPT, REJECT], 0)
    state = partition.state(leader_epoch=0)
    assert state.delivery_complete_count == 2
    assert state.lag(high_watermark=10) == 8  # offsets 0 and 3 in flight, 4-9 undelivered
