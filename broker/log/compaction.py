"""The record-level rules of log compaction: the offset map and what a batch keeps.

Kafka's cleaner maps each key of the dirty section to its last offset, then
copies every batch of the cleaned range keeping a record only if it is the
last one for its key (keys the map does not hold were deduplicated by an
earlier cleaning). Tombstones (null values) go once old enough; keyless
records go always. A batch keeps its base offset and offset span, codec,
attributes and producer fields, so offsets and producer sequences survive.
Records of aborted transactions supersede nothing (read_committed readers never
see them); transaction markers are kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..protocol.record_codec import BatchSpec, decode_batch, encode_batch
from ..protocol.records import BatchHeader
from .batch_rewrite import set_last_offset_delta
from .transaction_index import AbortedTxn

OffsetMap = dict[bytes, int]  # key -> offset of its last record in the dirty section


class AbortedBatches:
    """Which transactional batches belong to aborted transactions, from the aborted
    transaction index entries of the segments being cleaned."""

    def __init__(self, entries: Iterable[AbortedTxn]) -> None:
        self._ranges: dict[int, list[tuple[int, int]]] = {}
        for entry in entries:
            self._ranges.setdefault(entry.producer_id, []).append(
                (entry.first_offset, entry.last_offset)
            )

    def holds(self, header: BatchHeader) -> bool:
        if not header.is_transactional or header.is_control:
            return False
        ranges = self._ranges.get(header.producer_id, ())
        return any(first <= header.base_offset <= last for first, last in ranges)


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


def compact_batch(
    batch: memoryview, header: BatchHeader, offset_map: OffsetMap, drop_tombstones: bool
) -> CompactedBatch:
    """What remains of ``batch`` once superseded records (and old tombstones) are removed."""
    if header.is_control:
        return CompactedBatch(batch, 0)
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
    encoded = bytearray(
        encode_batch(
            BatchSpec(
                base_offset=header.base_offset,
                codec=header.compression,
                attributes=header.attributes,
                producer_id=header.producer_id,
                producer_epoch=header.producer_epoch,
                base_sequence=header.base_sequence,
                partition_leader_epoch=header.partition_leader_epoch,
                max_timestamp=header.max_timestamp if header.is_log_append_time else None,
                records=kept,
            )
        )
    )
    # the original span keeps baseSequence + lastOffsetDelta = the producer's last sequence
    set_last_offset_delta(encoded, header.last_offset_delta)
    return CompactedBatch(encoded, removed)
