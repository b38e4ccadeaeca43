"""The aborted transaction index of a segment, ``<base offset>.txnindex``, as Kafka keeps
it: one 34-byte big-endian entry per transaction an ABORT marker in the segment completed,
``version int16 (0), producer_id int64, first_offset int64, last_offset int64 (the marker),
last_stable_offset int64`` (the LSO just after the abort), in marker order.

A read_committed fetch collects the entries overlapping what it returns; the consumer drops
those producers' batches between ``first_offset`` and the marker.
"""

from __future__ import annotations

import os
import struct
from dataclasses import dataclass
from pathlib import Path

TXN_INDEX_SUFFIX = ".txnindex"
_ENTRY = struct.Struct(">hqqqq")
_VERSION = 0


@dataclass(frozen=True, slots=True)
class AbortedTxn:
    producer_id: int
    first_offset: int
    last_offset: int
    last_stable_offset: int


class TransactionIndex:
    """Entries kept in memory (they are few) and appended to the file as they come."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._entries = self._read() if path.exists() else []

    @property
    def entries(self) -> tuple[AbortedTxn, ...]:
        return tuple(self._entries)

    def append(self, entry: AbortedTxn) -> None:
        """Add an entry; one whose marker is not past the last entry's is already here (a
        replay after a restart) and is skipped."""
        if self._entries and entry.last_offset <= self._entries[-1].last_offset:
            return
        with self.path.open("ab") as handle:
            handle.write(
                _ENTRY.pack(
                    _VERSION,
                    entry.producer_id,
                    entry.first_offset,
                    entry.last_offset,
                    entry.last_stable_offset,
                )
            )
        self._entries.append(entry)

    def collect(self, fetch_offset: int, upper_bound: int) -> tuple[list[AbortedTxn], bool]:
        """The entries of transactions overlapping ``[fetch_offset, upper_bound)``, and
        whether the search is complete (an entry's LSO reached the bound: no later segment
        can hold an overlapping one)."""
        found = []
        for entry in self._entries:
            if entry.last_offset >= fetch_offset and entry.first_offset < upper_bound:
                found.append(entry)
            if entry.last_stable_offset >= upper_bound:
                return found, True
        return found, False

    def truncate_to(self, offset: int) -> None:
        """Drop the entries of markers at or after ``offset``."""
        kept = [entry for entry in self._entries if entry.last_offset < offset]
        if len(kept) == len(self._entries):
            return
        self._entries = kept
        if self.path.exists():
            os.truncate(self.path, len(kept) * _ENTRY.size)

    def reset(self) -> None:
        self._entries = []
        self.path.unlink(missing_ok=True)

    def flush(self) -> None:
        if self.path.exists():
            with self.path.open("rb+") as handle:
                os.fsync(handle.fileno())

    def _read(self) -> list[AbortedTxn]:
        """The file's whole entries (a torn last one, from a crash mid-append, is cut off:
        recovery appends it again)."""
        data = self.path.read_bytes()
        whole = len(data) - len(data) % _ENTRY.size
        if whole != len(data):
            os.truncate(self.path, whole)
        entries = []
        for position in range(0, whole, _ENTRY.size):
            version, *fields = _ENTRY.unpack_from(data, position)
            if version != _VERSION:
                raise ValueError(f"{self.path}: entry version {version}, expected {_VERSION}")
            entries.append(AbortedTxn(*fields))
        return entries
