"""Append-only files of fixed-size (key, value) entries, mirrored in memory for bisection.

Kafka mmaps preallocated index files; here the entries live in two packed arrays
(a 1 GiB segment with the default 4 KiB interval has ~260k entries: 5 MiB as arrays
of machine ints for both indexes, where lists of Python ints took 42) and the file
only receives appends, so a torn last entry is the only possible damage and is cut
off on load. No descriptor is held: new entries are written in batches
(``write_entries``: open, append, close), so a broker keeps one descriptor per
segment, as Kafka does, however many partitions it has. Entries not yet written
when the broker dies only make the index sparser at its end: loading a segment scans
the batches after its last entry anyway.
"""

from __future__ import annotations

import os
import struct
from array import array
from bisect import bisect_right
from itertools import pairwise
from pathlib import Path
from typing import ClassVar

from .file_io import write_fully


class IndexFile:
    """Base of the offset and time indexes: entries sorted by key."""

    ENTRY: ClassVar[struct.Struct]
    """Big-endian key and value, in struct codes that are ``array`` typecodes too."""

    def __init__(self, path: Path, base_offset: int) -> None:
        self.path = path
        self.base_offset = base_offset
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))
        data = path.read_bytes()
        whole = len(data) - len(data) % self.ENTRY.size
        if whole != len(data):
            os.truncate(path, whole)
        key_type, value_type = self.ENTRY.format[1], self.ENTRY.format[2]
        self._keys = array(key_type)
        self._values = array(value_type)
        for key, value in self.ENTRY.iter_unpack(data[:whole]):
            self._keys.append(key)
            self._values.append(value)
        self._written = len(self._keys)  # entries in the file; the rest are only in memory

    def __len__(self) -> int:
        return len(self._keys)

    @property
    def unwritten(self) -> int:
        return len(self._keys) - self._written

    def is_full(self, max_bytes: int) -> bool:
        """Whether the index holds as many entries as ``max_bytes`` (segment.index.bytes) fit."""
        return len(self._keys) >= max_bytes // self.ENTRY.size

    def _append(self, key: int, value: int) -> None:
        self._keys.append(key)
        self._values.append(value)

    def write_entries(self, sync: bool = False) -> None:
        """Append the entries not yet in the file, and fsync it if ``sync``."""
        if not self.unwritten and not sync:
            return
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND)
        try:
            if self.unwritten:
                entries = zip(
                    self._keys[self._written :], self._values[self._written :], strict=True
                )
                data = b"".join(self.ENTRY.pack(key, value) for key, value in entries)
                try:
                    write_fully(fd, data)
                except OSError:
                    # a torn entry would shift every later one (if this fails too, loading cuts it)
                    os.ftruncate(fd, self._written * self.ENTRY.size)
                    raise
                self._written = len(self._keys)
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)

    def _floor(self, key: int) -> int:
        """Slot of the greatest entry whose key is <= ``key``; -1 if there is none."""
        return bisect_right(self._keys, key) - 1

    def _keep(self, count: int) -> None:
        """Drop every entry after the first ``count``."""
        if count < len(self._keys):
            del self._keys[count:]
            del self._values[count:]
        if count < self._written:
            os.truncate(self.path, count * self.ENTRY.size)
            self._written = count

    def _is_sorted(self) -> bool:
        keys, values = self._keys, self._values
        return all(a < b for a, b in pairwise(keys)) and all(a <= b for a, b in pairwise(values))

    def reset(self) -> None:
        self._keep(0)

    def flush(self) -> None:
        self.write_entries(sync=True)
