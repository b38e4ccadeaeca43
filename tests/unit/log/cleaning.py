"""Helpers for the cleaner tests: keyed logs and the naive model of compaction."""

from __future__ import annotations

from batch_builder import KeyValue
from log_testing import read_records

from odradek.broker.log import PartitionLog

Row = tuple[int, bytes | None, bytes | None]  # offset, key, value


def rows(log: PartitionLog) -> list[Row]:
    """(offset, key, value) of every readable record."""
    return [(r.offset, r.key, r.value) for r in read_records(log)]


def compacted(appended: list[KeyValue], end: int, drop_tombstones: bool) -> list[Row]:
    """What compaction of offsets below ``end`` must leave of records appended at 0, 1, ...:
    the last record of each key, minus tombstones if they are old enough; the rest as is."""
    last = {key: offset for offset, (key, _) in enumerate(appended[:end])}
    return [
        (offset, key, value)
        for offset, (key, value) in enumerate(appended)
        if offset >= end or (last[key] == offset and not (drop_tombstones and value is None))
    ]
