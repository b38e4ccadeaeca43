"""The record-level rules of log compaction: the offset map and what a batch keeps.

Kafka's cleaner maps each key of the dirty section to its last offset, then
copies every batch of the cleaned range keeping a record only if it is the
last one for its key (keys the map does not hold were deduplicated by an
earlier cleaning). Tombstones (null values) go once old enough; keyless
records go always. A batch keeps its base offset and offset span, codec,
attributes and producer fields, so offsets and producer sequences survive.
Transactions, as Kafka's cleaner treats them (``CleanedTransactionMetadata``):
records of aborted transactions supersede nothing and are removed; a marker is
kept while the cleaning meets data of its transaction (an abort marker keeps its
aborted-index entry then), and once it guards no data it gets a delete horizon,
``delete.retention.ms`` on (KIP-534: a batch attribute, the base timestamp), and
goes in the first cleaning past it, so a reader that saw the data also sees it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..protocol.record_codec import BatchSpec, decode_batch, encode_batch
from ..protocol.records import BatchHeader
from ..protocol.transaction_markers import MarkerType, decode_marker
from .batch_rewrite import set_last_offset_delta
from .transaction_index import AbortedTxn

OffsetMap = dict[bytes, int]  # key -> offset of its last record in the dirty section


class CleanedTransactions:
    """The transactions a cleaning meets, read batch by batch in offset order: which
    data batches belong to aborted ones (from the aborted transaction index entries
    overlapping the cleaned range), and which markers still guard data."""

    def __init__(self, entries: Iterable[AbortedTxn]) -> None:
        self._aborted: dict[int, list[AbortedTxn]] = {}
        for entry in entries:
            self._aborted.setdefault(entry.producer_id, []).append(entry)
        self._seen_aborted: set[AbortedTxn] = set()
        self._seen_committed: set[int] = set()  # producers met with data since their marker

    def aborted(self, header: BatchHeader) -> AbortedTxn | None:
        """The aborted transaction a data batch belongs to, if any."""
        if not header.is_transactional or header.is_control:
            return None
        return next(
            (
                entry
                for entry in self._aborted.get(header.producer_id, ())
                if entry.first_offset <= header.base_offset <= entry.last_offset
            ),
            None,
        )

    def discards(self, header: BatchHeader) -> bool:
        """Whether a data batch goes (its transaction aborted); notes what it met."""
        entry = self.aborted(header)
        if entry is not None:
            self._seen_aborted.add(entry)
        elif header.is_transactional:
            self._seen_committed.add(header.producer_id)
        return entry is not None

    def guarded(self, header: BatchHeader, batch: memoryview) -> tuple[bool, AbortedTxn | None]:
        """Whether a control batch still guards data met in this cleaning, and the aborted
        index entry that goes with it then."""
        marker = decode_marker(batch)
        if marker is None:
            return False, None
        if marker.type is MarkerType.COMMIT:
            guards = header.producer_id in self._seen_committed
            self._seen_committed.discard(header.producer_id)
            return guards, None
        entry = next(
            (
                e
                for e in self._aborted.get(header.producer_id, ())
                if e.last_offset == header.base_offset
            ),
            None,
        )
        if entry is None or entry not in self._seen_aborted:
            return False, None
        return True, entry


def add_to_offset_map(offset_map: OffsetMap, batch: memoryview, header: BatchHeader) -> None:
    """Record the keys of ``batch`` (control batches hold no keyed data)."""
    if header.is_control:
        return
    for record in decode_batch(batch)[1]:
        if record.key is not None:
            offset_map[record.key] = record.offset


@dataclass(frozen=True)
class CompactedBatch:
    data: (
        bytes | bytearray | memoryview | None
    )  # the batch to keep (itself when nothing went); None: drop
    removed: int  # records removed


def retain_marker(
    batch: memoryview, header: BatchHeader, guards: bool, now_ms: int, retention_ms: int
) -> CompactedBatch:
    """A control batch as the cleaner keeps it: whole while it guards data; otherwise
    stamped with a delete horizon ``retention_ms`` from now, and dropped past it."""
    horizon = header.delete_horizon_ms
    if guards or (horizon is not None and horizon > now_ms):
        return CompactedBatch(batch, 0)
    if horizon is not None:
        return CompactedBatch(None, header.records_count)
    _, records = decode_batch(batch)
    stamped = BatchSpec.like(header, records, delete_horizon_ms=now_ms + retention_ms)
    return CompactedBatch(encode_batch(stamped), 0)


def compact_batch(
    batch: memoryview, header: BatchHeader, offset_map: OffsetMap, drop_tombstones: bool
) -> CompactedBatch:
    """What remains of a data batch once superseded records (and old tombstones) are
    removed."""
    _, records = decode_batch(batch)
    kept = [
        record
        for record in records
        if record.key is not None
        and record.offset >= offset_map.get(record.key, record.offset)
        and not (drop_tombstones and record.value is None)
    ]
    removed = len(records) - len(kept)
    if not removed:
        return CompactedBatch(batch, 0)
    if not kept:
        return CompactedBatch(None, removed)
    max_timestamp = header.max_timestamp if header.is_log_append_time else None
    encoded = bytearray(encode_batch(BatchSpec.like(header, kept, max_timestamp=max_timestamp)))
    # the original span keeps baseSequence + lastOffsetDelta = the producer's last sequence
    set_last_offset_delta(encoded, header.last_offset_delta)
    return CompactedBatch(encoded, removed)
