"""The coordinator's decisions for a transactional id, transition by transition, with
Kafka's error codes."""

from __future__ import annotations

import itertools
from collections.abc import Callable

import pytest

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.transaction.transaction_log_format import TransactionState
from odradek.broker.transaction.transaction_metadata import (
    EXHAUSTED_EPOCH,
    TransactionMetadata,
    add_partitions,
    complete,
    end_transaction,
    fence,
    init_producer_id,
    open_ages_ms,
    verify_partitions,
)

S = TransactionState
TV1 = 0


def NO_NEW_ID() -> int:
    raise AssertionError("no producer id is allocated")


def ids() -> Callable[[], int]:
    counter = itertools.count(1000)
    return lambda: next(counter)


def fails(code: ErrorCode, action: Callable[[], object]) -> None:
    with pytest.raises(KafkaError) as error:
        action()
    assert error.value.code is code


def started() -> TransactionMetadata:
    return init_producer_id(None, "app", 60000, None, 1, ids())


def test_a_new_id_gets_a_producer_at_epoch_zero_and_each_init_bumps_it() -> None:
    first = started()
    assert (first.producer_id, first.producer_epoch, first.state) == (1000, 0, S.EMPTY)
    again = init_producer_id(first, "app", 30000, None, 2, ids())
    assert (again.producer_id, again.producer_epoch, again.timeout_ms) == (1000, 1, 30000)


def test_a_re_init_naming_its_producer_bumps_and_a_retry_gets_the_same_answer() -> None:
    first = started()
    bumped = init_producer_id(first, "app", 60000, (1000, 0), 2, ids())
    assert (bumped.producer_epoch, bumped.last_producer_epoch) == (1, 0)
    retried = init_producer_id(bumped, "app", 60000, (1000, 0), 3, ids())
    assert retried.producer_epoch == 1
    fails(
        ErrorCode.producer_fenced, lambda: init_producer_id(bumped, "app", 1, (1000, 7), 3, ids())
    )
    fails(ErrorCode.producer_fenced, lambda: init_producer_id(bumped, "app", 1, (5, 1), 3, ids()))


def test_an_exhausted_epoch_moves_the_id_to_a_new_producer() -> None:
    worn = TransactionMetadata("app", 5, EXHAUSTED_EPOCH, 60000)
    renewed = init_producer_id(worn, "app", 60000, None, 2, ids())
    assert (renewed.producer_id, renewed.producer_epoch) == (1000, 0)


def test_a_transaction_goes_ongoing_prepared_and_complete() -> None:
    meta = started()
    ongoing = add_partitions(
        meta, (1000, 0), [("orders", 0), ("orders", 1)], 10, client_version=TV1
    )
    assert ongoing is not None and ongoing.state is S.ONGOING and ongoing.start_ms == 10
    assert ongoing.partitions == {"orders": frozenset({0, 1})}
    assert (
        add_partitions(ongoing, (1000, 0), [("orders", 1)], 11, client_version=TV1) is None
    )  # nothing new
    more = add_partitions(ongoing, (1000, 0), [("audit", 0)], 12, client_version=TV1)
    assert more is not None and more.start_ms == 10 and set(more.partitions) == {"orders", "audit"}
    prepared = end_transaction(
        more, (1000, 0), commit=True, now_ms=13, client_version=TV1, new_producer_id=NO_NEW_ID
    )
    assert prepared is not None and prepared.state is S.PREPARE_COMMIT
    fails(
        ErrorCode.concurrent_transactions,
        lambda: end_transaction(
            prepared, (1000, 0), True, 14, client_version=TV1, new_producer_id=NO_NEW_ID
        ),
    )
    fails(
        ErrorCode.concurrent_transactions,
        lambda: add_partitions(prepared, (1000, 0), [], 14, client_version=TV1),
    )
    fails(
        ErrorCode.concurrent_transactions,
        lambda: init_producer_id(prepared, "app", 1, None, 14, ids()),
    )
    done = complete(prepared, 15)
    assert done.state is S.COMPLETE_COMMIT and done.partitions == {}
    assert (
        end_transaction(
            done, (1000, 0), commit=True, now_ms=16, client_version=TV1, new_producer_id=NO_NEW_ID
        )
        is None
    )  # a retry
    fails(
        ErrorCode.invalid_txn_state,
        lambda: end_transaction(
            done, (1000, 0), False, 16, client_version=TV1, new_producer_id=NO_NEW_ID
        ),
    )
    fails(
        ErrorCode.invalid_txn_state,
        lambda: end_transaction(
            started(), (1000, 0), True, 16, client_version=TV1, new_producer_id=NO_NEW_ID
        ),
    )


def test_requests_of_another_producer_or_epoch_are_refused() -> None:
    meta = started()
    fails(
        ErrorCode.invalid_producer_id_mapping,
        lambda: add_partitions(meta, (7, 0), [], 1, client_version=TV1),
    )
    fails(
        ErrorCode.producer_fenced,
        lambda: add_partitions(meta, (1000, 3), [], 1, client_version=TV1),
    )
    fails(
        ErrorCode.producer_fenced,
        lambda: end_transaction(
            meta, (1000, 3), True, 1, client_version=TV1, new_producer_id=NO_NEW_ID
        ),
    )


def test_verification_confirms_only_the_partitions_of_the_ongoing_transaction() -> None:
    ongoing = add_partitions(started(), (1000, 0), [("orders", 0)], 10, client_version=TV1)
    assert ongoing is not None
    orders = [("orders", 0), ("orders", 1)]
    assert verify_partitions(ongoing, (1000, 0), orders) == {
        ("orders", 0): ErrorCode.none,
        ("orders", 1): ErrorCode.transaction_abortable,
    }
    aborting = end_transaction(
        ongoing, (1000, 0), False, 11, client_version=TV1, new_producer_id=NO_NEW_ID
    )
    assert aborting is not None
    done = complete(aborting, 12)
    assert verify_partitions(done, (1000, 0), orders[:1]) == {
        ("orders", 0): ErrorCode.transaction_abortable  # ended: a late batch
    }
    prepared = end_transaction(
        ongoing, (1000, 0), True, 11, client_version=TV1, new_producer_id=NO_NEW_ID
    )
    fails(ErrorCode.concurrent_transactions, lambda: verify_partitions(prepared, (1000, 0), []))
    fails(ErrorCode.producer_fenced, lambda: verify_partitions(ongoing, (1000, 1), []))
    fails(ErrorCode.invalid_producer_id_mapping, lambda: verify_partitions(ongoing, (7, 0), []))
    fails(ErrorCode.invalid_producer_id_mapping, lambda: verify_partitions(None, (7, 0), []))


def test_an_ongoing_transaction_is_fenced_by_an_epoch_bump_and_aborted() -> None:
    ongoing = add_partitions(started(), (1000, 0), [("orders", 0)], 10, client_version=TV1)
    assert ongoing is not None
    fails(
        ErrorCode.concurrent_transactions,
        lambda: init_producer_id(ongoing, "app", 1, None, 11, ids()),
    )
    fenced = fence(ongoing, 11)
    assert (fenced.state, fenced.producer_epoch) == (S.PREPARE_ABORT, 1)
    assert fenced.partitions == ongoing.partitions  # the markers still go to them
    fails(
        ErrorCode.producer_fenced,
        lambda: end_transaction(
            fenced, (1000, 0), True, 12, client_version=TV1, new_producer_id=NO_NEW_ID
        ),
    )
    aborted = complete(fenced, 12)
    assert aborted.state is S.COMPLETE_ABORT
    assert init_producer_id(aborted, "app", 1, None, 13, ids()).producer_epoch == 2


def test_the_stored_state_round_trips() -> None:
    ongoing = add_partitions(started(), (1000, 0), [("orders", 0)], 10, client_version=TV1)
    assert ongoing is not None
    loaded = TransactionMetadata.loaded("app", ongoing.stored())
    assert loaded == ongoing


def test_open_transactions_are_aged_from_their_start_until_complete() -> None:
    empty = started()
    ongoing = add_partitions(empty, (1000, 0), [("t", 0)], 100, client_version=TV1)
    assert ongoing is not None
    prepared = end_transaction(
        ongoing, (1000, 0), True, 300, client_version=TV1, new_producer_id=NO_NEW_ID
    )
    assert prepared is not None
    assert open_ages_ms([empty, ongoing, prepared, complete(prepared, 400)], 1100) == [1000, 1000]
    assert open_ages_ms([ongoing], 50) == [0]  # a clock behind the one that started it


TV2 = 2


def ongoing_v2(epoch: int = 0) -> TransactionMetadata:
    base = TransactionMetadata("app", 1000, epoch, 60000, last_update_ms=1)
    added = add_partitions(base, (1000, epoch), [("orders", 0)], 10, client_version=TV2)
    assert added is not None
    return added


def test_version_2_bumps_the_epoch_at_each_end_and_a_retry_names_the_old_one() -> None:
    prepared = end_transaction(ongoing_v2(), (1000, 0), True, 20, TV2, NO_NEW_ID)
    assert prepared is not None
    assert (prepared.state, prepared.producer_epoch, prepared.client_version) == (
        S.PREPARE_COMMIT,
        1,
        TV2,
    )
    assert prepared.completed_producer == (1000, 1)  # what EndTxn v5 answers
    # while the markers are written, a retry is CONCURRENT_TRANSACTIONS
    fails(
        ErrorCode.concurrent_transactions,
        lambda: end_transaction(prepared, (1000, 0), True, 21, TV2, NO_NEW_ID),
    )
    done = complete(prepared, 22)
    assert (done.state, done.producer_id, done.producer_epoch) == (S.COMPLETE_COMMIT, 1000, 1)
    assert end_transaction(done, (1000, 0), True, 23, TV2, NO_NEW_ID) is None  # a retry
    fails(
        ErrorCode.invalid_txn_state,
        lambda: end_transaction(done, (1000, 0), False, 23, TV2, NO_NEW_ID),
    )
    # the old epoch can neither add partitions nor end the next transaction
    fails(
        ErrorCode.producer_fenced,
        lambda: add_partitions(done, (1000, 0), [("orders", 0)], 24, client_version=TV2),
    )
    fails(
        ErrorCode.producer_fenced,
        lambda: end_transaction(done, (1000, 3), True, 24, TV2, NO_NEW_ID),
    )


def test_version_2_aborts_with_no_partition_added_under_a_bumped_epoch() -> None:
    empty = TransactionMetadata("app", 1000, 4, 60000, last_update_ms=1)
    aborting = end_transaction(empty, (1000, 4), False, 30, TV2, NO_NEW_ID)
    assert aborting is not None
    assert (aborting.state, aborting.producer_epoch, aborting.start_ms) == (S.PREPARE_ABORT, 5, 30)
    assert aborting.partitions == {}
    fails(
        ErrorCode.invalid_txn_state,
        lambda: end_transaction(empty, (1000, 4), True, 30, TV2, NO_NEW_ID),
    )
    # another abort after a completed one is a new (empty) transaction, not a retry
    done = complete(aborting, 31)
    again = end_transaction(done, (1000, 5), False, 32, TV2, NO_NEW_ID)
    assert again is not None and again.producer_epoch == 6


def test_version_2_hands_an_exhausted_epoch_over_to_a_new_producer_id() -> None:
    worn = ongoing_v2(EXHAUSTED_EPOCH)
    prepared = end_transaction(worn, (1000, EXHAUSTED_EPOCH), True, 40, TV2, lambda: 2000)
    assert prepared is not None
    assert (prepared.producer_id, prepared.producer_epoch) == (1000, EXHAUSTED_EPOCH + 1)
    assert prepared.next_producer_id == 2000  # the markers still go out as producer 1000
    assert prepared.completed_producer == (2000, 0)
    done = complete(prepared, 41)
    assert (done.producer_id, done.producer_epoch, done.previous_producer_id) == (2000, 0, 1000)
    # a retry from the old producer id is recognised
    assert end_transaction(done, (1000, EXHAUSTED_EPOCH), True, 42, TV2, NO_NEW_ID) is None
    fails(
        ErrorCode.invalid_producer_id_mapping,
        lambda: end_transaction(done, (1000, 5), True, 42, TV2, NO_NEW_ID),
    )
    # and so is the producer re-initialising from the exhausted epoch
    assert init_producer_id(done, "app", 60000, (1000, EXHAUSTED_EPOCH), 43, ids()).producer_id == (
        2000
    )


def test_a_timed_out_version_2_transaction_lets_its_producer_abort_but_not_commit() -> None:
    fenced = fence(ongoing_v2(3), 50)
    assert (fenced.state, fenced.producer_epoch, fenced.last_producer_epoch) == (
        S.PREPARE_ABORT,
        4,
        3,
    )
    done = complete(fenced, 51)
    assert end_transaction(done, (1000, 3), False, 52, TV2, NO_NEW_ID) is None
    fails(
        ErrorCode.invalid_txn_state,
        lambda: end_transaction(done, (1000, 3), True, 52, TV2, NO_NEW_ID),
    )
