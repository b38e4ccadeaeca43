"""What the coordinator decides for one transactional id, as Kafka's ``TransactionMetadata``
and ``TransactionCoordinator`` decide it. Transaction version 1: the client adds partitions
and only InitProducerId bumps the epoch. Version 2 (KIP-890, EndTxn v5+): partition leaders
add partitions as the producer's batches arrive, and every EndTxn bumps the epoch, so a
late batch of a finished transaction is fenced; an exhausted epoch hands the id over to a
new producer id when the transaction completes.

Each decision is a pure function from the current state (and the request) to the state to
write to ``__transaction_state``, or a ``KafkaError`` with Kafka's code. The coordinator
writes the new state, then applies it; nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.transaction.transaction_log_format import (
    NO_PRODUCER_ID,
    StoredTransaction,
    TransactionState,
)

NO_EPOCH = -1
EXHAUSTED_EPOCH = 32766
"""An epoch from which bumping would overflow: Kafka gives the id a new producer id instead."""
MAX_EPOCH = 32767
EPOCH_BUMPS_FROM = 2
"""The transaction version from which every EndTxn bumps the epoch."""


@dataclass(frozen=True)
class TransactionMetadata:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TransactionState = TransactionState.EMPTY
    partitions: Mapping[str, frozenset[int]] = field(default_factory=dict)
    start_ms: int = -1
    last_update_ms: int = -1
    last_producer_epoch: int = NO_EPOCH
    """The epoch before the last bump, so a retried InitProducerId gets the same answer."""
    previous_producer_id: int = NO_PRODUCER_ID
    next_producer_id: int = NO_PRODUCER_ID
    """Where a completing transaction whose epoch is exhausted hands the id over to."""
    client_version: int = 0

    def stored(self) -> StoredTransaction:
        return StoredTransaction(
            self.producer_id,
            self.producer_epoch,
            self.timeout_ms,
            self.state,
            self.partitions if self.state is not TransactionState.EMPTY else {},
            self.last_update_ms,
            self.start_ms,
            self.previous_producer_id,
            self.next_producer_id,
            client_version=self.client_version,
        )

    @classmethod
    def loaded(cls, transactional_id: str, stored: StoredTransaction) -> TransactionMetadata:
        return cls(
            transactional_id,
            stored.producer_id,
            stored.producer_epoch,
            stored.timeout_ms,
            stored.state,
            dict(stored.partitions),
            stored.start_ms,
            stored.last_update_ms,
            previous_producer_id=stored.previous_producer_id,
            next_producer_id=stored.next_producer_id,
            client_version=stored.client_version,
        )

    @property
    def completed_producer(self) -> tuple[int, int]:
        """The producer id and epoch the transaction leaves the id with once completed."""
        if self.next_producer_id != NO_PRODUCER_ID:
            return self.next_producer_id, 0
        return self.producer_id, self.producer_epoch


def init_producer_id(
    current: TransactionMetadata | None,
    transactional_id: str,
    timeout_ms: int,
    expected: tuple[int, int] | None,
    now_ms: int,
    new_producer_id: Callable[[], int],
) -> TransactionMetadata:
    """InitProducerId with a transactional id: the state whose producer id and epoch the
    client gets. ``expected`` is the (producer id, epoch) a client re-initialising says it
    has (KIP-360), None for a new producer. An Ongoing transaction cannot be answered here:
    the caller fences and aborts it first (``fence``) and the client retries."""
    if current is None:
        return TransactionMetadata(
            transactional_id, new_producer_id(), 0, timeout_ms, last_update_ms=now_ms
        )
    if current.state in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT):
        raise KafkaError(ErrorCode.concurrent_transactions, "a transaction is completing")
    if current.state is TransactionState.ONGOING:
        raise KafkaError(ErrorCode.concurrent_transactions, "an open transaction is aborted")
    if expected is not None and not _expected_valid(current, expected):
        raise KafkaError(
            ErrorCode.producer_fenced,
            f"producer {expected[0]} epoch {expected[1]} is not the current one of "
            f"{transactional_id!r}",
        )
    base = replace(current, timeout_ms=timeout_ms, last_update_ms=now_ms, partitions={})
    if expected is not None and expected[1] == current.last_producer_epoch:
        return base  # a retry of the last bump: the same answer
    if current.producer_epoch >= EXHAUSTED_EPOCH:
        return replace(
            base,
            producer_id=new_producer_id(),
            producer_epoch=0,
            last_producer_epoch=NO_EPOCH,
            state=TransactionState.EMPTY,
        )
    return replace(
        base,
        producer_epoch=current.producer_epoch + 1,
        last_producer_epoch=current.producer_epoch if expected is not None else NO_EPOCH,
        state=TransactionState.EMPTY,
    )


def needs_new_producer_id(current: TransactionMetadata | None) -> bool:
    """Whether InitProducerId gives the id a new producer id (a new id, or an exhausted
    epoch), which the coordinator allocates before deciding."""
    return current is None or current.producer_epoch >= EXHAUSTED_EPOCH


def _expected_valid(current: TransactionMetadata, expected: tuple[int, int]) -> bool:
    producer_id, epoch = expected
    if producer_id == current.previous_producer_id and epoch >= EXHAUSTED_EPOCH:
        return True  # a retry after an EndTxn that handed the id over to a new producer id
    if producer_id != current.producer_id:
        return False
    return epoch in (current.producer_epoch, current.last_producer_epoch)


def add_partitions(
    current: TransactionMetadata,
    producer: tuple[int, int],
    partitions: Iterable[tuple[str, int]],
    now_ms: int,
    client_version: int,
) -> TransactionMetadata | None:
    """AddPartitionsToTxn (and AddOffsetsToTxn's offsets partition; with transaction
    version 2 a partition leader's): the Ongoing state with them added, or None when they
    are all in the transaction already."""
    check_producer(current, producer)
    if current.state in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT):
        raise KafkaError(ErrorCode.concurrent_transactions, "the transaction is completing")
    if current.state is TransactionState.DEAD:
        raise KafkaError(ErrorCode.invalid_txn_state, "the transactional id expired")
    merged = {topic: set(indexes) for topic, indexes in current.partitions.items()}
    for topic, index in partitions:
        merged.setdefault(topic, set()).add(index)
    frozen = {topic: frozenset(indexes) for topic, indexes in merged.items()}
    if current.state is TransactionState.ONGOING and frozen == current.partitions:
        return None
    starting = current.state is not TransactionState.ONGOING
    return replace(
        current,
        state=TransactionState.ONGOING,
        partitions=frozen,
        start_ms=now_ms if starting else current.start_ms,
        last_update_ms=now_ms,
        previous_producer_id=current.producer_id,
        client_version=client_version,
    )


def verify_partitions(
    current: TransactionMetadata | None,
    producer: tuple[int, int],
    partitions: Iterable[tuple[str, int]],
) -> dict[tuple[str, int], ErrorCode]:
    """KIP-890's check for a partition leader about to take a producer's first transactional
    batch: each partition's NONE when it is in the producer's ongoing transaction, else
    TRANSACTION_ABORTABLE; the whole check fails with Kafka's codes for another producer
    id, an older epoch, or a transaction that is completing."""
    if current is None or current.producer_id != producer[0]:
        raise KafkaError(ErrorCode.invalid_producer_id_mapping, "another producer id")
    if current.producer_epoch != producer[1]:
        raise KafkaError(ErrorCode.producer_fenced, "an older producer epoch")
    if current.state in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT):
        raise KafkaError(ErrorCode.concurrent_transactions, "the transaction is completing")
    ongoing = current.state is TransactionState.ONGOING
    return {
        (topic, index): ErrorCode.none
        if ongoing and index in current.partitions.get(topic, ())
        else ErrorCode.transaction_abortable
        for topic, index in partitions
    }


def end_transaction(
    current: TransactionMetadata,
    producer: tuple[int, int],
    commit: bool,
    now_ms: int,
    client_version: int,
    new_producer_id: Callable[[], int],
) -> TransactionMetadata | None:
    """EndTxn: the PrepareCommit or PrepareAbort state to write, or None when the
    transaction already completed that way (a retry). ``new_producer_id`` is called when a
    version 2 transaction's epoch is exhausted."""
    if client_version >= EPOCH_BUMPS_FROM:
        return _end_bumping_epoch(current, producer, commit, now_ms, new_producer_id)
    check_producer(current, producer)
    prepare = TransactionState.PREPARE_COMMIT if commit else TransactionState.PREPARE_ABORT
    done = TransactionState.COMPLETE_COMMIT if commit else TransactionState.COMPLETE_ABORT
    if current.state is TransactionState.ONGOING:
        return replace(current, state=prepare, last_update_ms=now_ms, client_version=client_version)
    if current.state is done:
        return None
    if current.state is prepare:
        raise KafkaError(ErrorCode.concurrent_transactions, "the transaction is completing")
    raise _invalid_transition(current, commit)


def _end_bumping_epoch(
    current: TransactionMetadata,
    producer: tuple[int, int],
    commit: bool,
    now_ms: int,
    new_producer_id: Callable[[], int],
) -> TransactionMetadata | None:
    """EndTxn of transaction version 2, as Kafka decides it: the epoch is bumped, so the
    request's epoch is one below the id's after a retry (or, across a hand-over to a new
    producer id, the exhausted epoch of the previous one); an abort is allowed with no
    partition added (the producer cannot know whether a batch added one)."""
    producer_id, epoch = producer
    state = current.state
    retry_on_bump = current.producer_epoch == epoch + 1
    retry_on_overflow = (
        current.previous_producer_id == producer_id
        and epoch == EXHAUSTED_EPOCH
        and current.producer_epoch == 0
    )
    is_retry = retry_on_bump or retry_on_overflow
    if state in (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT):
        valid_epoch = retry_on_bump
    elif state in (TransactionState.COMPLETE_COMMIT, TransactionState.COMPLETE_ABORT):
        valid_epoch = is_retry or epoch == current.producer_epoch
    else:
        valid_epoch = epoch == current.producer_epoch
    if producer_id != current.producer_id and not retry_on_overflow:
        raise KafkaError(
            ErrorCode.invalid_producer_id_mapping,
            f"producer {producer_id} is not {current.transactional_id!r}'s",
        )
    if not valid_epoch:
        raise KafkaError(
            ErrorCode.producer_fenced,
            f"epoch {epoch} of producer {producer_id} is not the current {current.producer_epoch}",
        )
    prepare = TransactionState.PREPARE_COMMIT if commit else TransactionState.PREPARE_ABORT
    done = TransactionState.COMPLETE_COMMIT if commit else TransactionState.COMPLETE_ABORT
    if state is TransactionState.ONGOING:
        return _prepare_bumped(current, prepare, now_ms, new_producer_id, partitions_added=True)
    if state is prepare:
        raise KafkaError(ErrorCode.concurrent_transactions, "the transaction is completing")
    if state is done and is_retry:
        return None
    if not commit and not is_retry and state in IDLE_STATES:
        return _prepare_bumped(current, prepare, now_ms, new_producer_id, partitions_added=False)
    raise _invalid_transition(current, commit)


def _prepare_bumped(
    current: TransactionMetadata,
    prepare: TransactionState,
    now_ms: int,
    new_producer_id: Callable[[], int],
    partitions_added: bool,
) -> TransactionMetadata:
    exhausted = current.producer_epoch >= EXHAUSTED_EPOCH
    return replace(
        current,
        state=prepare,
        producer_epoch=min(current.producer_epoch + 1, MAX_EPOCH),
        last_producer_epoch=current.producer_epoch,
        next_producer_id=new_producer_id() if exhausted else NO_PRODUCER_ID,
        previous_producer_id=current.producer_id,
        start_ms=current.start_ms if partitions_added else now_ms,
        last_update_ms=now_ms,
        client_version=max(current.client_version, EPOCH_BUMPS_FROM),
    )


def needs_new_producer_id_at_end(current: TransactionMetadata | None, client_version: int) -> bool:
    """Whether EndTxn may hand the id over to a new producer id, which the coordinator
    allocates before deciding."""
    return (
        current is not None
        and client_version >= EPOCH_BUMPS_FROM
        and current.producer_epoch >= EXHAUSTED_EPOCH
    )


def _invalid_transition(current: TransactionMetadata, commit: bool) -> KafkaError:
    return KafkaError(
        ErrorCode.invalid_txn_state,
        f"cannot {'commit' if commit else 'abort'} a transaction in state {current.state.name}",
    )


def fence(current: TransactionMetadata, now_ms: int) -> TransactionMetadata:
    """A timed-out or re-initialised Ongoing transaction: aborted under a bumped epoch, so
    its producer is fenced (PrepareAbort, written with the new epoch). A version 2
    producer's abort of it then counts as a retry, as in Kafka."""
    bumps = current.client_version >= EPOCH_BUMPS_FROM
    return replace(
        current,
        producer_epoch=min(current.producer_epoch + 1, MAX_EPOCH),
        last_producer_epoch=current.producer_epoch if bumps else NO_EPOCH,
        state=TransactionState.PREPARE_ABORT,
        last_update_ms=now_ms,
    )


def complete(current: TransactionMetadata, now_ms: int) -> TransactionMetadata:
    """Every marker of a prepared transaction written: CompleteCommit or CompleteAbort."""
    done = (
        TransactionState.COMPLETE_COMMIT
        if current.state is TransactionState.PREPARE_COMMIT
        else TransactionState.COMPLETE_ABORT
    )
    producer_id, epoch = current.completed_producer
    return replace(
        current,
        state=done,
        partitions={},
        last_update_ms=now_ms,
        producer_id=producer_id,
        producer_epoch=epoch,
        previous_producer_id=current.producer_id,
        next_producer_id=NO_PRODUCER_ID,
    )


OPEN_STATES = (
    TransactionState.ONGOING,
    TransactionState.PREPARE_COMMIT,
    TransactionState.PREPARE_ABORT,
)
"""A transaction holding back its partitions' last stable offset until its markers are
written."""


def open_ages_ms(transactions: Iterable[TransactionMetadata], now_ms: int) -> list[int]:
    """How long each open transaction has been open (never negative: a coordinator's clock
    may be behind the one that started it, before a failover)."""
    return [max(now_ms - t.start_ms, 0) for t in transactions if t.state in OPEN_STATES]


IDLE_STATES = (
    TransactionState.EMPTY,
    TransactionState.COMPLETE_COMMIT,
    TransactionState.COMPLETE_ABORT,
)


def is_expired(current: TransactionMetadata, now_ms: int, expiration_ms: int) -> bool:
    """Whether the id has had no transaction for ``transactional.id.expiration.ms``: Kafka
    then removes it (a tombstone in its partition), and the id's next InitProducerId
    starts afresh with a new producer id."""
    return current.state in IDLE_STATES and current.last_update_ms + expiration_ms <= now_ms


def check_producer(current: TransactionMetadata, producer: tuple[int, int]) -> None:
    """The request's producer must be the id's current one."""
    producer_id, epoch = producer
    if producer_id != current.producer_id:
        raise KafkaError(
            ErrorCode.invalid_producer_id_mapping,
            f"producer {producer_id} is not {current.transactional_id!r}'s",
        )
    if epoch != current.producer_epoch:
        raise KafkaError(
            ErrorCode.producer_fenced,
            f"epoch {epoch} of producer {producer_id} is not the current {current.producer_epoch}",
        )
