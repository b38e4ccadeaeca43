"""Kafka's ProducerStateManager: the last batches of each idempotent producer, and the
transaction each transactional producer has open.

Each partition remembers, per producer id, the producer epoch and the
sequence ranges and offsets of its last five batches: enough to answer a
retried batch with its original offsets and to reject gaps. A transactional
producer's first batch after a marker opens a transaction at its offset; the
next marker (COMMIT or ABORT) completes it. The state is snapshotted to
``<offset>.snapshot`` files (covering batches below that offset) and rebuilt on
open from the newest snapshot plus the batches after it.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from crc32c import crc32c

from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.records import NO_SEQUENCE, BatchHeader
from ..protocol.transaction_markers import TransactionMarker
from .file_io import write_atomically
from .offset_file_names import base_offset_of, file_name

logger = logging.getLogger(__name__)

BATCHES_PER_PRODUCER = 5
SNAPSHOT_SUFFIX = ".snapshot"
SNAPSHOT_VERSION = 2
SEQUENCE_MODULUS = 1 << 31
NO_TRANSACTION = -1

_SNAPSHOT_HEADER = struct.Struct(">hIi")  # version, crc32c of the rest, producer count
_PRODUCER_V1 = struct.Struct(">qhb")  # producer id, epoch, batch count
_PRODUCER = struct.Struct(">qhbiq")  # ... and coordinator epoch, open transaction's offset
_BATCH = struct.Struct(">iiqqq")  # first/last sequence, first/last offset, max timestamp


class BatchMetadata(NamedTuple):
    first_seq: int
    last_seq: int
    first_offset: int
    last_offset: int
    max_timestamp: int


@dataclass(frozen=True, slots=True)
class CompletedTxn:
    """A transaction a marker completed: its first data offset and the marker's offset."""

    producer_id: int
    first_offset: int
    last_offset: int
    aborted: bool


class ProducerEntry(NamedTuple):
    """A producer's epoch and its last batches, oldest first; the epoch of the coordinator
    that wrote its last marker, and the first offset of its open transaction (tuples, as
    an entry is replaced for every batch appended)."""

    epoch: int
    batches: tuple[BatchMetadata, ...]
    coordinator_epoch: int = -1
    txn_first_offset: int = NO_TRANSACTION

    @property
    def in_transaction(self) -> bool:
        return self.txn_first_offset != NO_TRANSACTION

    @property
    def last_seq(self) -> int:
        """-1 when a marker's new epoch left no batch: the next one starts at 0."""
        return self.batches[-1].last_seq if self.batches else -1

    @property
    def last_timestamp(self) -> int:
        return self.batches[-1].max_timestamp if self.batches else -1

    def find_duplicate(self, header: BatchHeader) -> BatchMetadata | None:
        if header.producer_epoch != self.epoch:
            return None
        for batch in self.batches:
            if batch.first_seq == header.base_sequence and batch.last_seq == header.last_sequence:
                return batch
        return None

    def with_batch(self, header: BatchHeader) -> ProducerEntry:
        """This entry once ``header`` (offsets assigned) is appended; a new epoch starts afresh."""
        batch = BatchMetadata(
            header.base_sequence,
            header.last_sequence,
            header.base_offset,
            header.last_offset,
            header.max_timestamp,
        )
        first = self.txn_first_offset
        if header.is_transactional and first == NO_TRANSACTION:
            first = header.base_offset
        if header.producer_epoch != self.epoch:
            return ProducerEntry(header.producer_epoch, (batch,), self.coordinator_epoch, first)
        batches = (*self.batches, batch)[-BATCHES_PER_PRODUCER:]
        return ProducerEntry(self.epoch, batches, self.coordinator_epoch, first)

    def with_marker(self, marker: TransactionMarker) -> ProducerEntry:
        """This entry once ``marker`` is in the log: no transaction open, the marker's epoch
        (a new epoch forgets the batches) and coordinator epoch."""
        batches = self.batches if marker.producer_epoch == self.epoch else ()
        return ProducerEntry(marker.producer_epoch, batches, marker.coordinator_epoch)


def _appended(entry: ProducerEntry | None, header: BatchHeader) -> ProducerEntry:
    """The entry of ``header``'s producer once ``header`` is in the log."""
    if entry is None:
        entry = ProducerEntry(header.producer_epoch, ())
    return entry.with_batch(header)


def _completed(
    entry: ProducerEntry | None, marker: TransactionMarker, offset: int
) -> tuple[ProducerEntry, CompletedTxn | None]:
    """The entry once the marker at ``offset`` is in the log, and what it completed."""
    if entry is None:
        entry = ProducerEntry(marker.producer_epoch, ())
    completed = None
    if entry.in_transaction:
        completed = CompletedTxn(
            marker.producer_id, entry.txn_first_offset, offset, aborted=not marker.commits
        )
    return entry.with_marker(marker), completed


class ProducerAppend:
    """Checks one append's batches in order against the state, staging changes until commit."""

    def __init__(self, producers: Mapping[int, ProducerEntry]) -> None:
        self._producers = producers
        self.updates: dict[int, ProducerEntry] = {}

    def _entry(self, producer_id: int) -> ProducerEntry | None:
        return self.updates.get(producer_id) or self._producers.get(producer_id)

    def check(self, header: BatchHeader) -> BatchMetadata | None:
        """The original batch if ``header`` is a retry of it; raise if it cannot be appended."""
        entry = self._entry(header.producer_id)
        if entry is None:
            # Kafka's rule: with no state for the producer here (new, or its batches gone
            # with retention, DeleteRecords or a log rebuilt from a later start) any
            # sequence is accepted. librdkafka takes OUT_OF_ORDER_SEQUENCE_NUMBER for a
            # batch after acknowledged ones as fatal.
            return None
        if header.producer_epoch < entry.epoch:
            raise KafkaError(
                ErrorCode.invalid_producer_epoch,
                f"producer {header.producer_id} epoch {header.producer_epoch} is older than "
                f"{entry.epoch}",
            )
        if entry.in_transaction and not header.is_transactional:
            raise KafkaError(
                ErrorCode.invalid_txn_state,
                f"producer {header.producer_id} sent a non-transactional batch while its "
                f"transaction from offset {entry.txn_first_offset} is open",
            )
        if header.base_sequence == NO_SEQUENCE:
            return None  # a coordinator's write for the producer (TxnOffsetCommit): no sequence
        if header.producer_epoch > entry.epoch:
            if header.base_sequence != 0:
                raise KafkaError(
                    ErrorCode.out_of_order_sequence_number,
                    f"producer {header.producer_id} new epoch {header.producer_epoch} must start "
                    f"at sequence 0, got {header.base_sequence}",
                )
            return None
        duplicate = entry.find_duplicate(header)
        if duplicate is not None:
            return duplicate
        if header.base_sequence != (entry.last_seq + 1) % SEQUENCE_MODULUS:
            raise KafkaError(
                ErrorCode.out_of_order_sequence_number,
                f"producer {header.producer_id} sequence {header.base_sequence} does not follow "
                f"{entry.last_seq}",
            )
        return None

    def record(self, header: BatchHeader) -> None:
        """Stage ``header`` (offsets assigned) as appended."""
        self.updates[header.producer_id] = _appended(self._entry(header.producer_id), header)

    def check_marker(self, marker: TransactionMarker) -> None:
        """Raise if the coordinator may not write ``marker`` (a fenced epoch of the producer
        or of the coordinator)."""
        entry = self._entry(marker.producer_id)
        if entry is None:
            return
        if marker.producer_epoch < entry.epoch:
            raise KafkaError(
                ErrorCode.invalid_producer_epoch,
                f"marker epoch {marker.producer_epoch} of producer {marker.producer_id} is "
                f"older than {entry.epoch}",
            )
        if marker.coordinator_epoch < entry.coordinator_epoch:
            raise KafkaError(
                ErrorCode.transaction_coordinator_fenced,
                f"marker of coordinator epoch {marker.coordinator_epoch} for producer "
                f"{marker.producer_id}, which saw {entry.coordinator_epoch}",
            )

    def record_marker(self, marker: TransactionMarker, offset: int) -> CompletedTxn | None:
        """Stage ``marker`` (appended at ``offset``); the transaction it completed."""
        entry, completed = _completed(self._entry(marker.producer_id), marker, offset)
        self.updates[marker.producer_id] = entry
        return completed


class ProducerStateManager:
    """Producer entries of one partition, and their snapshot files in its directory."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._producers: dict[int, ProducerEntry] = {}
        self._open: dict[int, int] = {}  # producer id -> first offset of its open transaction

    def entry(self, producer_id: int) -> ProducerEntry | None:
        return self._producers.get(producer_id)

    @property
    def producers(self) -> Mapping[int, ProducerEntry]:
        """Every producer with batches in the log, by id (DescribeProducers)."""
        return self._producers

    def begin(self) -> ProducerAppend:
        return ProducerAppend(self._producers)

    def commit(self, append: ProducerAppend) -> None:
        for producer_id, entry in append.updates.items():
            self._set(producer_id, entry)

    def open_transactions(self) -> Mapping[int, int]:
        """The first offset of each open transaction, by producer id."""
        return self._open

    def _set(self, producer_id: int, entry: ProducerEntry) -> None:
        self._producers[producer_id] = entry
        if entry.in_transaction:
            self._open[producer_id] = entry.txn_first_offset
        else:
            self._open.pop(producer_id, None)

    def _load(self, producers: dict[int, ProducerEntry]) -> None:
        self._producers = producers
        self._open = {
            producer_id: entry.txn_first_offset
            for producer_id, entry in producers.items()
            if entry.in_transaction
        }

    def replay(
        self, batches: Iterable[tuple[BatchHeader, TransactionMarker | None]]
    ) -> list[CompletedTxn]:
        """Apply batches already in the log (each with its marker, for a marker batch),
        without checks (recovery, replication); the transactions their markers completed."""
        completed: list[CompletedTxn] = []
        for header, marker in batches:
            if not header.has_producer_id:
                continue
            producer_id = header.producer_id
            if marker is not None:
                entry, done = _completed(
                    self._producers.get(producer_id), marker, header.base_offset
                )
                self._set(producer_id, entry)
                if done is not None:
                    completed.append(done)
            elif not header.is_control:
                self._set(producer_id, _appended(self._producers.get(producer_id), header))
        return completed

    def reset(self) -> None:
        """Forget every producer and delete every snapshot (the log restarts empty)."""
        self._load({})
        self.delete_snapshots_after(-1)

    def delete_snapshots_before(self, offset: int) -> None:
        """Delete snapshots of deleted segments.

        Producers whose batches were deleted stay known (Kafka's KIP-360): a
        producer still sending after retention removed its earlier batches
        must not be refused as unknown. The snapshot at the first remaining
        segment keeps them across restarts.
        """
        for snapshot_offset in self.snapshot_offsets():
            if snapshot_offset < offset:
                self._snapshot_path(snapshot_offset).unlink(missing_ok=True)

    def snapshot_offsets(self) -> list[int]:
        return sorted(base_offset_of(path) for path in self.directory.glob("*" + SNAPSHOT_SUFFIX))

    def _snapshot_path(self, offset: int) -> Path:
        return self.directory / file_name(offset, SNAPSHOT_SUFFIX)

    def take_snapshot(self, offset: int) -> None:
        """Persist the state as of ``offset`` (every batch below it applied)."""
        body = bytearray()
        for producer_id, entry in self._producers.items():
            body += _PRODUCER.pack(
                producer_id,
                entry.epoch,
                len(entry.batches),
                entry.coordinator_epoch,
                entry.txn_first_offset,
            )
            for b in entry.batches:
                body += _BATCH.pack(
                    b.first_seq, b.last_seq, b.first_offset, b.last_offset, b.max_timestamp
                )
        header = _SNAPSHOT_HEADER.pack(SNAPSHOT_VERSION, crc32c(body), len(self._producers))
        write_atomically(self._snapshot_path(offset), header + body)

    def delete_snapshots_after(self, offset: int) -> None:
        for snapshot_offset in self.snapshot_offsets():
            if snapshot_offset > offset:
                self._snapshot_path(snapshot_offset).unlink(missing_ok=True)

    def load_snapshot(self, log_start_offset: int, log_end_offset: int) -> int:
        """Load the newest readable snapshot within the log; return the offset to replay from.

        ``log_start_offset`` is where the log's first segment begins. Snapshots
        beyond the log end (the log was truncated since) are deleted. Without a
        usable snapshot the state is empty and replay starts at the log start.
        """
        self.delete_snapshots_after(log_end_offset)
        self._load({})
        for offset in reversed(self.snapshot_offsets()):
            if offset < log_start_offset:
                break
            try:
                self._load(_decode_snapshot(self._snapshot_path(offset).read_bytes()))
            except (ValueError, struct.error) as exc:
                logger.warning(
                    "ignoring producer snapshot %s: %s", self._snapshot_path(offset), exc
                )
                continue
            return offset
        return log_start_offset


def _decode_snapshot(data: bytes) -> dict[int, ProducerEntry]:
    """Version 2, or version 1 (written before transactions: none open)."""
    version, crc, count = _SNAPSHOT_HEADER.unpack_from(data)
    if version not in (1, SNAPSHOT_VERSION):
        raise ValueError(f"version {version}, expected 1 or {SNAPSHOT_VERSION}")
    if crc32c(data[_SNAPSHOT_HEADER.size :]) != crc:
        raise ValueError("CRC-32C mismatch")
    layout = _PRODUCER if version == SNAPSHOT_VERSION else _PRODUCER_V1
    producers: dict[int, ProducerEntry] = {}
    position = _SNAPSHOT_HEADER.size
    for _ in range(count):
        producer_id, epoch, batch_count, *transaction = layout.unpack_from(data, position)
        position += layout.size
        batches = []
        for _ in range(batch_count):
            batches.append(BatchMetadata(*_BATCH.unpack_from(data, position)))
            position += _BATCH.size
        producers[producer_id] = ProducerEntry(epoch, tuple(batches), *transaction)
    return producers
