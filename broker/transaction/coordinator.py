"""The transaction coordinator: what the transaction APIs' handlers call.

It serves the transactional ids of the ``__transaction_state`` partitions this broker leads
(``CoordinatorPartitions``), each id's state rebuilt from its latest record. A change is
decided by ``transaction_metadata``, written to the log (acks=all), then applied; while one
is in flight (a write, or the markers of a completing transaction) the id answers
CONCURRENT_TRANSACTIONS, as Kafka's pending state does. EndTxn is answered once
PrepareCommit/PrepareAbort is written; the markers then go to every partition of the
transaction (``MarkerWriter``), and CompleteCommit/CompleteAbort is written after them. A
new leader of a partition finishes the prepared transactions it loads.

For metrics it counts the commits it prepares and the aborts, by why (``AbortReason``), and
tells the ages of the open transactions; ``transaction_metrics`` reads them at scrape time.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable

from odradek.broker.cluster.background_tasks import BackgroundTasks
from odradek.broker.cluster.coordinator_log import LoggedItem, LoggedRecord
from odradek.broker.cluster.coordinator_partitions import (
    CoordinatorPartitions,
    java_string_hashcode,
)
from odradek.broker.cluster.internal_topics import find_coordinator
from odradek.broker.cluster.metadata_image import BrokerRegistration
from odradek.broker.cluster.metadata_store import MetadataStore
from odradek.broker.cluster.partition import PartitionKey
from odradek.broker.cluster.replica_manager import ReplicaManager
from odradek.broker.log.steady_clock import steady_clock
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.record_fields import RecordFormatError
from odradek.broker.protocol.transaction_markers import MarkerType, TransactionMarker
from odradek.broker.transaction.marker_writer import MarkerWriter
from odradek.broker.transaction.transaction_config import TRANSACTION_STATE_TOPIC, TransactionConfig
from odradek.broker.transaction.transaction_log_format import (
    TransactionState,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
)
from odradek.broker.transaction.transaction_metadata import (
    TransactionMetadata,
    add_partitions,
    complete,
    end_transaction,
    fence,
    init_producer_id,
    is_expired,
    needs_new_producer_id,
    needs_new_producer_id_at_end,
    open_ages_ms,
    verify_partitions,
)

log = logging.getLogger(__name__)
PREPARED = (TransactionState.PREPARE_COMMIT, TransactionState.PREPARE_ABORT)


class AbortReason(enum.Enum):
    CLIENT = "client"  # EndTxn: the producer aborted
    TIMEOUT = "timeout"  # open longer than its transaction.timeout.ms
    FENCED = "fenced"  # InitProducerId of a new producer with the same transactional id


def partition_for_transactional_id(transactional_id: str, partitions: int) -> int:
    """Kafka's placement: ``abs(hashCode) % partitions``."""
    return (java_string_hashcode(transactional_id) & 0x7FFFFFFF) % partitions


class TransactionCoordinator:
    def __init__(
        self,
        config: TransactionConfig,
        store: MetadataStore,
        replicas: ReplicaManager,
        allocate_producer_id: Callable[[], Awaitable[int]],
        markers: MarkerWriter,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.config = config
        self._store = store
        self._allocate = allocate_producer_id
        self._markers = markers
        # steady: a stepped system clock neither times out nor expires transactions
        self._clock = clock or steady_clock()
        self.partitions = CoordinatorPartitions(
            TRANSACTION_STATE_TOPIC,
            store,
            replicas,
            partition_for_transactional_id,
            self._load,
            self._unload,
            lambda: config.min_insync,
            config.write_timeout_ms,
        )
        self.transactions: dict[str, TransactionMetadata] = {}
        self._pending: set[str] = set()
        self._tasks = BackgroundTasks()
        self.commits = 0
        self.aborts: Counter[AbortReason] = Counter()

    # --- life cycle ----------------------------------------------------------------------------

    def start(self) -> None:
        self.partitions.start()
        self._tasks.spawn(self._abort_timed_out_every())
        self._tasks.spawn(self._remove_expired_every())

    async def stop(self) -> None:
        await self._tasks.cancel_all()
        await self.partitions.close()

    async def find_coordinator(self, transactional_id: str) -> BrokerRegistration:
        return await find_coordinator(
            self._store, self.config.topic, transactional_id, partition_for_transactional_id
        )

    # --- the APIs ------------------------------------------------------------------------------

    async def init_producer_id(
        self, transactional_id: str, timeout_ms: int, expected: tuple[int, int] | None
    ) -> tuple[int, int]:
        if not 0 < timeout_ms <= self.config.max_timeout_ms:
            raise KafkaError(
                ErrorCode.invalid_transaction_timeout,
                f"transaction.timeout.ms {timeout_ms} is not in (0, "
                f"transaction.max.timeout.ms={self.config.max_timeout_ms}]",
            )
        current = self._owned(transactional_id)
        if current is not None and current.state is TransactionState.ONGOING:
            fenced = fence(current, self.now_ms())
            self._complete_in_background(transactional_id, fenced, AbortReason.FENCED)
            raise KafkaError(ErrorCode.concurrent_transactions, "aborting the open transaction")
        fresh = await self._allocate() if needs_new_producer_id(current) else -1
        chosen = init_producer_id(
            current, transactional_id, timeout_ms, expected, self.now_ms(), lambda: fresh
        )
        await self._write(transactional_id, chosen)
        return chosen.producer_id, chosen.producer_epoch

    async def add_partitions(
        self,
        transactional_id: str,
        producer: tuple[int, int],
        partitions: Iterable[tuple[str, int]],
        client_version: int,
    ) -> None:
        current = self._existing(transactional_id)
        changed = add_partitions(current, producer, partitions, self.now_ms(), client_version)
        if changed is not None:
            await self._write(transactional_id, changed)

    def verify(
        self,
        transactional_id: str,
        producer: tuple[int, int],
        partitions: Iterable[tuple[str, int]],
    ) -> dict[tuple[str, int], ErrorCode]:
        """AddPartitionsToTxn's verify_only (KIP-890): which partitions are in the producer's
        ongoing transaction. A change in flight is not waited for: the partition leader's
        guard catches a transaction that ends before its batch is appended."""
        return verify_partitions(self._owned(transactional_id, idle=False), producer, partitions)

    async def end_transaction(
        self,
        transactional_id: str,
        producer: tuple[int, int],
        commit: bool,
        client_version: int,
    ) -> tuple[int, int]:
        """End the transaction; the producer id and epoch its producer goes on with (from
        transaction version 2 a bumped epoch, or a new producer id)."""
        current = self._existing(transactional_id)
        fresh = (
            await self._allocate() if needs_new_producer_id_at_end(current, client_version) else -1
        )
        current = self._existing(transactional_id)  # as it is after the allocation
        prepared = end_transaction(
            current, producer, commit, self.now_ms(), client_version, lambda: fresh
        )
        if prepared is None:
            return current.producer_id, current.producer_epoch  # a retry: the same answer
        await self._write(transactional_id, prepared)
        if commit:
            self.commits += 1
        else:
            self.aborts[AbortReason.CLIENT] += 1
        self._complete_in_background(transactional_id, prepared, written=True)
        return prepared.completed_producer

    def describe(self, transactional_id: str) -> TransactionMetadata:
        found = self._owned(transactional_id, idle=False)
        if found is None or found.state is TransactionState.DEAD:
            raise KafkaError(ErrorCode.transactional_id_not_found)
        return found

    def list_transactions(self) -> list[TransactionMetadata]:
        if self.partitions.loading:
            raise KafkaError(ErrorCode.coordinator_load_in_progress)
        return [
            t
            for t in self.transactions.values()
            if t.state is not TransactionState.DEAD and self.partitions.serves(t.transactional_id)
        ]

    def open_transaction_ages_ms(self) -> list[int]:
        """How long each open transaction of the ids coordinated here has been open."""
        return open_ages_ms(self.transactions.values(), self.now_ms())

    # --- completion ----------------------------------------------------------------------------

    def _complete_in_background(
        self,
        transactional_id: str,
        prepared: TransactionMetadata,
        reason: AbortReason | None = None,
        written: bool = False,
    ) -> None:
        """Write ``prepared`` (unless ``written``; an abort counted by ``reason`` once
        written), its markers, then its completion."""
        self._pending.add(transactional_id)
        self._tasks.spawn(self._complete(transactional_id, prepared, reason, written))

    async def _complete(
        self,
        transactional_id: str,
        prepared: TransactionMetadata,
        reason: AbortReason | None,
        written: bool,
    ) -> None:
        try:
            if not written:
                await self._write(transactional_id, prepared, pending_ok=True)
                if reason is not None:
                    self.aborts[reason] += 1
            marker = TransactionMarker(
                prepared.producer_id,
                prepared.producer_epoch,
                MarkerType.COMMIT
                if prepared.state is TransactionState.PREPARE_COMMIT
                else MarkerType.ABORT,
                self._coordinator_epoch(transactional_id),
            )
            await self._markers.write(marker, prepared.partitions)
            await self._write(transactional_id, complete(prepared, self.now_ms()), pending_ok=True)
        except KafkaError as error:
            log.warning("transaction %r not completed yet: %s", transactional_id, error.message)
        finally:
            self._pending.discard(transactional_id)

    async def _abort_timed_out_every(self) -> None:
        while True:
            await asyncio.sleep(self.config.abort_timed_out_interval_ms / 1000)
            now = self.now_ms()
            for transactional_id, current in list(self.transactions.items()):
                if (
                    current.state is TransactionState.ONGOING
                    and transactional_id not in self._pending
                    and current.start_ms + current.timeout_ms < now
                ):
                    log.info("transaction %r timed out: aborting it", transactional_id)
                    timed_out = fence(current, now)
                    self._complete_in_background(transactional_id, timed_out, AbortReason.TIMEOUT)

    async def _remove_expired_every(self) -> None:
        while True:
            await asyncio.sleep(self.config.remove_expired_interval_ms / 1000)
            await self.remove_expired()

    async def remove_expired(self) -> None:
        """Remove the ids idle for ``transactional.id.expiration.ms``: a tombstone each, as
        Kafka writes, so the compacted log forgets them too."""
        now = self.now_ms()
        for transactional_id, current in list(self.transactions.items()):
            if transactional_id in self._pending or not is_expired(
                current, now, self.config.id_expiration_ms
            ):
                continue
            self._pending.add(transactional_id)
            try:
                await self.partitions.write(
                    transactional_id, [(encode_key(transactional_id), None)]
                )
                if self.transactions.get(transactional_id) is current:
                    del self.transactions[transactional_id]
                log.info("transactional id %r expired: removed", transactional_id)
            except KafkaError as error:
                log.warning("transactional id %r not removed yet: %s", transactional_id, error)
            finally:
                self._pending.discard(transactional_id)

    # --- state ---------------------------------------------------------------------------------

    def _owned(self, transactional_id: str, idle: bool = True) -> TransactionMetadata | None:
        """The id's state (None: unknown) if this broker coordinates it; with ``idle``,
        CONCURRENT_TRANSACTIONS while a change of it is in flight."""
        if not transactional_id:
            raise KafkaError(ErrorCode.invalid_request, "an empty transactional id")
        self.partitions.check_owned(transactional_id)
        if idle and transactional_id in self._pending:
            raise KafkaError(ErrorCode.concurrent_transactions)
        return self.transactions.get(transactional_id)

    def _existing(self, transactional_id: str) -> TransactionMetadata:
        found = self._owned(transactional_id)
        if found is None:
            raise KafkaError(ErrorCode.invalid_producer_id_mapping, "no such transactional id")
        return found

    async def _write(
        self, transactional_id: str, state: TransactionMetadata, pending_ok: bool = False
    ) -> None:
        """Write the state to the log, then apply it; one write per id at a time."""
        if not pending_ok:
            if transactional_id in self._pending:
                raise KafkaError(ErrorCode.concurrent_transactions)
            self._pending.add(transactional_id)
        try:
            record = (encode_key(transactional_id), encode_value(state.stored()))
            await self.partitions.write(transactional_id, [record])
            self.transactions[transactional_id] = state
        finally:
            if not pending_ok:
                self._pending.discard(transactional_id)

    def _load(self, partition: PartitionKey, records: Iterable[LoggedItem]) -> Callable[[], None]:
        loaded: dict[str, TransactionMetadata | None] = {}
        for logged in records:
            if not isinstance(logged, LoggedRecord):
                continue  # no transaction writes to __transaction_state
            raw_key, raw_value = logged.key, logged.value
            try:
                transactional_id = decode_key(raw_key)
                loaded[transactional_id] = (
                    TransactionMetadata.loaded(transactional_id, decode_value(raw_value))
                    if raw_value is not None
                    else None
                )
            except RecordFormatError as error:
                log.error("skipping an unreadable %s record: %s", TRANSACTION_STATE_TOPIC, error)

        def install() -> None:
            for transactional_id, state in loaded.items():
                if state is None:
                    continue
                self.transactions[transactional_id] = state
                if state.state in PREPARED:  # the old leader did not finish it
                    self._complete_in_background(transactional_id, state, written=True)
            if loaded:
                log.info("loaded %d transactional ids from %s", len(loaded), partition)

        return install

    def _unload(self, index: int) -> None:
        for transactional_id in [
            t for t in self.transactions if self.partitions.partition_of(t) == index
        ]:
            del self.transactions[transactional_id]

    def _coordinator_epoch(self, transactional_id: str) -> int:
        """The leader epoch of the id's partition: markers of a deposed coordinator carry
        an older one and are fenced."""
        topic = self._store.image.topics.get(TRANSACTION_STATE_TOPIC)
        if topic is None:
            raise KafkaError(ErrorCode.not_coordinator)
        return topic.partitions[self.partitions.partition_of(transactional_id)].leader_epoch

    def now_ms(self) -> int:
        """The coordinator's time, in which transactions' timestamps are kept."""
        return int(self._clock() * 1000)
