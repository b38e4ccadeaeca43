"""Append-only files of fixed-size (key, value) entries, mirrored in memory for bisection.

Kafka mmaps preallocated index files; here the entries live in two Python
lists (a 1 GiB segment with the default 4 KiB interval has ~260k entries) and
the file only receives appends, so a torn last entry is the only possible
damage and is cut off on load.
"""

from __future__ import annotations

import contextlib
import os
import struct
from bisect import bisect_right
from itertools import pairwise
from pathlib import Path
from typing import ClassVar

from .file_io import write_fully


class IndexFile:
    """Base of the offset and time indexes: entries sorted by key."""

    ENTRY: ClassVar[struct.Struct]

    def __init__(self, path: Path, base_offset: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        data = path.read_bytes()
        whole = len(data) - len(data) % self.ENTRY.size
        if whole != len(data):
            os.ftruncate(self._fd, whole)
        self._keys: list[int] = []
        self._values: list[int] = []
        for key, value in self.ENTRY.iter_unpack(data[:whole]):
            self._keys.append(key)
            self._values.append(value)

    def __len__(self) -> int:
        return len(self._keys)

    def is_full(self, max_bytes: int) -> bool:
        """Whether the index holds as many entries as ``max_bytes`` (segment.index.bytes) fit."""
        return len(self._keys) >= max_bytes // self.ENTRY.size

    def _append(self, key: int, value: int) -> None:
        try:
            write_fully(self._fd, self.ENTRY.pack(key, value))
        except OSError:
            # a torn entry would shift every later one (if this fails too, loading cuts it)
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, len(self._keys) * self.ENTRY.size)
            raise
        self._keys.append(key)
        self._values.append(value)

    def _floor(self, key: int) -> int:
        """Slot of the greatest entry whose key is <= ``key``; -1 if there is none."""
        return bisect_right(self._keys, key) - 1

    def _keep(self, count: int) -> None:
        """Drop every entry after the first ``count``."""
        if count < len(self._keys):
            del self._keys[count:]
            del self._values[count:]
            os.ftruncate(self._fd, count * self.ENTRY.size)

    def _is_sorted(self) -> bool:
        keys, values = self._keys, self._values
        return all(a < b for a, b in pairwise(keys)) and all(a <= b for a, b in pairwise(values))

    def reset(self) -> None:
        self._keep(0)

    def flush(self) -> None:
        os.fsync(self._fd)

    def close(self) -> None:
        os.close(self._fd)
