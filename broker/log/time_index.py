"""Sparse index from the largest timestamp so far to the offset of the batch that first had it."""

from __future__ import annotations

import struct
from bisect import bisect_left
from typing import ClassVar

from .index_file import IndexFile


class TimeIndex(IndexFile):
    """Entries (timestamp: i64, offset - base_offset: i32); timestamps strictly increase.

    An entry (t, o) says: the batch at offset o is the first of the segment whose
    max timestamp is t, and every batch before it has a smaller max timestamp.
    """

    ENTRY: ClassVar[struct.Struct] = struct.Struct(">qi")

    def maybe_append(self, timestamp: int, offset: int) -> None:
        """Add an entry when ``timestamp`` is above the last one (else it tells nothing new)."""
        if not self._keys or timestamp > self._keys[-1]:
            self._append(timestamp, offset - self.base_offset)

    def lookup(self, timestamp: int) -> int:
        """Offset from which to scan for the first batch with max timestamp >= ``timestamp``."""
        slot = self._floor(timestamp)
        return self.base_offset + self._values[slot] if slot >= 0 else self.base_offset

    @property
    def last_entry(self) -> tuple[int, int] | None:
        """(timestamp, offset) of the last entry."""
        if not self._keys:
            return None
        return self._keys[-1], self.base_offset + self._values[-1]

    def truncate_to(self, offset: int) -> None:
        """Drop entries for offsets >= ``offset``."""
        self._keep(bisect_left(self._values, offset - self.base_offset))

    def is_consistent(self, next_offset: int) -> bool:
        """Whether the entries are ordered and point below ``next_offset``."""
        return self._is_sorted() and (
            not self._values or self.base_offset + self._values[-1] < next_offset
        )
