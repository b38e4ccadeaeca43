"""Sparse index from offset to the file position of the batch starting there."""

from __future__ import annotations

import struct
from bisect import bisect_left
from typing import ClassVar

from .index_file import IndexFile


class OffsetIndex(IndexFile):
    """Entries (offset - base_offset: i32, position: i32), both strictly increasing."""

    ENTRY: ClassVar[struct.Struct] = struct.Struct(">ii")

    def append(self, offset: int, position: int) -> None:
        if self._keys and offset - self.base_offset <= self._keys[-1]:
            raise ValueError(f"offset index entry {offset} not above the last one")
        self._append(offset - self.base_offset, position)

    def lookup(self, offset: int) -> int:
        """Position of the greatest indexed batch starting at or before ``offset`` (else 0)."""
        slot = self._floor(offset - self.base_offset)
        return self._values[slot] if slot >= 0 else 0

    @property
    def last_position(self) -> int:
        return self._values[-1] if self._values else 0

    def truncate_to(self, offset: int) -> None:
        """Drop entries for offsets >= ``offset``."""
        self._keep(bisect_left(self._keys, offset - self.base_offset))

    def is_consistent(self, log_size: int) -> bool:
        """Whether the entries are ordered and point inside a log of ``log_size`` bytes."""
        return self._is_sorted() and (not self._values or self._values[-1] < log_size)
