"""One log segment: a ``.log`` file of whole batches with its offset, time and aborted
transaction indexes."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from io import FileIO
from pathlib import Path

from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.records import (
    HEADER_SIZE,
    LOG_OVERHEAD,
    MAGIC,
    BatchHeader,
    header_at,
)
from .file_io import fsync_directory, write_fully
from .offset_file_names import file_name
from .offset_index import OffsetIndex
from .time_index import TimeIndex
from .transaction_index import TXN_INDEX_SUFFIX, TransactionIndex

LOG_SUFFIX = ".log"
INDEX_SUFFIX = ".index"
TIME_INDEX_SUFFIX = ".timeindex"
SEGMENT_SUFFIXES = (LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX)
MAX_RELATIVE_OFFSET = 2**31 - 1  # index entries store offsets relative to the base as i32


# Index entries are written in batches: each costs an open, a write and a close, and
# holding no index file open keeps a broker at one descriptor per segment. 256 entries
# are about 1 MiB of log at the default index.interval.bytes.
INDEX_WRITE_BATCH = 256
SCAN_BLOCK_MIN = 4096
SCAN_BLOCK_MAX = 1 << 20


def _open_for_append(path: str, flags: int) -> int:
    return os.open(path, flags, 0o644)


def segment_path(directory: Path, base_offset: int, suffix: str) -> Path:
    return directory / file_name(base_offset, suffix)


class LogSegment:
    """Batches from ``base_offset`` on, appended with ``os.write`` and read with ``os.pread``.

    ``file`` is the segment's one file descriptor, kept open for its lifetime (as Kafka
    keeps a segment's FileChannel): appends go through it (O_APPEND), and fetch responses
    ``sendfile`` and ``pread`` from it. The indexes hold none (see ``index_file``).
    """

    def __init__(self, directory: Path, base_offset: int, now_ms: int, suffix: str = "") -> None:
        """Open (creating if needed) the files; ``suffix`` names a segment being written
        aside, e.g. a cleaned one, as ``<base>.log<suffix>``."""
        self.base_offset = base_offset
        self.log_path = segment_path(directory, base_offset, LOG_SUFFIX + suffix)
        self.file = FileIO(self.log_path, "a+", opener=_open_for_append)
        self._fd = self.file.fileno()
        self.offset_index = OffsetIndex(
            segment_path(directory, base_offset, INDEX_SUFFIX + suffix), base_offset
        )
        self.time_index = TimeIndex(
            segment_path(directory, base_offset, TIME_INDEX_SUFFIX + suffix), base_offset
        )
        self.txn_index = TransactionIndex(
            segment_path(directory, base_offset, TXN_INDEX_SUFFIX + suffix)
        )
        self.size = os.fstat(self._fd).st_size
        self.next_offset = base_offset
        self.max_timestamp = -1
        self.offset_of_max_timestamp = -1
        # segment.ms counts from the first append; a reloaded segment uses its first batch's time
        self.rolling_base_ms = now_ms
        self._bytes_since_index_entry = 0

    @classmethod
    def create(cls, directory: Path, base_offset: int, now_ms: int) -> LogSegment:
        """A new empty segment whose files survive a power loss."""
        segment = cls(directory, base_offset, now_ms)
        fsync_directory(directory)
        return segment

    def load(self, now_ms: int) -> bool:
        """Derive in-memory state from trusted files; False if they look damaged."""
        if not self.offset_index.is_consistent(self.size):
            return False
        self._reset_state()
        last_time_entry = self.time_index.last_entry
        if last_time_entry is not None:
            self.max_timestamp, self.offset_of_max_timestamp = last_time_entry
        start = self.offset_index.last_position
        try:
            for position, header in self.headers_from(start):
                self._track(header)
                self._bytes_since_index_entry = position + header.size - start
        except KafkaError:
            return False
        if self.size > 0:
            first = self.read_header(0)
            # compaction may have removed the batches at the base offset, never added lower ones
            if first is None or first.base_offset < self.base_offset:
                return False
            self.rolling_base_ms = (
                min(now_ms, first.max_timestamp) if first.max_timestamp >= 0 else now_ms
            )
        return self.time_index.is_consistent(self.next_offset)

    def append(
        self,
        data: bytes | bytearray | memoryview,
        headers: Sequence[BatchHeader],
        index_interval_bytes: int,
        now_ms: int,
    ) -> None:
        """Write ``data`` (whole batches, offsets assigned; header positions relative to it)."""
        if self.size == 0:
            self.rolling_base_ms = now_ms
        start = self.size
        try:
            write_fully(self._fd, data)
        except OSError:
            # a partial write (disk full) would shift every later batch's position
            os.ftruncate(self._fd, start)
            raise
        self.size += len(data)
        for header in headers:
            self.index_batch(header, start + header.position, index_interval_bytes)
        if self.offset_index.unwritten >= INDEX_WRITE_BATCH:
            self.write_index_entries()

    def index_batch(self, header: BatchHeader, position: int, index_interval_bytes: int) -> None:
        """Account for a batch written at ``position``: index entries, end offset, max time."""
        self._track(header)
        if self._bytes_since_index_entry > index_interval_bytes:
            self.offset_index.append(header.base_offset, position)
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
            self._bytes_since_index_entry = 0
        self._bytes_since_index_entry += header.size

    def indexes_full(self, max_index_bytes: int) -> bool:
        return self.offset_index.is_full(max_index_bytes) or self.time_index.is_full(
            max_index_bytes
        )

    def _track(self, header: BatchHeader) -> None:
        if header.max_timestamp > self.max_timestamp:
            self.max_timestamp = header.max_timestamp
            self.offset_of_max_timestamp = header.base_offset
        self.next_offset = header.next_offset

    def _reset_state(self) -> None:
        self.next_offset = self.base_offset
        self.max_timestamp = -1
        self.offset_of_max_timestamp = -1
        self._bytes_since_index_entry = 0

    def read_header(self, position: int) -> BatchHeader | None:
        """The header of the batch at ``position``, or None if no whole v2 batch starts there."""
        return self._header_in(os.pread(self.file.fileno(), HEADER_SIZE, position), 0, position)

    def headers_from(self, position: int) -> Iterator[tuple[int, BatchHeader]]:
        """(position, header) of every batch from ``position`` to the end of the segment
        (the header's own ``position`` is its place in the file too).

        The file is read a block at a time, the blocks growing from SCAN_BLOCK_MIN to
        SCAN_BLOCK_MAX: a short scan (a read's lookup past an index entry) costs one small
        read, a long one (recovery, producer state) one read per many batches."""
        block = SCAN_BLOCK_MIN
        while position < self.size:
            data = os.pread(self.file.fileno(), min(block, self.size - position), position)
            start = position
            while (header := self._header_in(data, position - start, position)) is not None:
                yield position, header
                position += header.size
            if position == start:
                raise KafkaError(
                    ErrorCode.corrupt_message, f"{self.log_path}: no valid batch at {position}"
                )
            block = min(block * 2, SCAN_BLOCK_MAX)

    def _header_in(self, data: bytes, offset: int, position: int) -> BatchHeader | None:
        """The header at ``offset`` in ``data``, read from ``position`` of the file, or None
        if no whole v2 batch starts there."""
        if len(data) - offset < HEADER_SIZE:
            return None
        header = header_at(data, offset, position)
        if (
            header.magic != MAGIC
            or header.batch_length < HEADER_SIZE - LOG_OVERHEAD
            or position + header.size > self.size
        ):
            return None
        return header

    def read_bytes(self, position: int, length: int) -> bytes:
        return os.pread(self.file.fileno(), length, position)

    def find(self, offset: int) -> tuple[int, BatchHeader] | None:
        """Position and header of the first batch whose last offset is >= ``offset``."""
        for position, header in self.headers_from(self.offset_index.lookup(offset)):
            if header.last_offset >= offset:
                return position, header
        return None

    def reset_indexes(self) -> None:
        """Forget indexes and derived state, before re-indexing every batch (the aborted
        transactions come back with the producer state's replay)."""
        self.offset_index.reset()
        self.time_index.reset()
        self.txn_index.reset()
        self._reset_state()

    def truncate_to_position(self, position: int) -> None:
        os.ftruncate(self._fd, position)
        self.size = position

    def rollback(self, position: int, first_offset: int) -> None:
        """Undo an append that began at ``position`` with the batch at ``first_offset``,
        whether it failed in the write, an index or the flush."""
        self.truncate_to_position(position)
        self.offset_index.truncate_to(first_offset)
        self.time_index.truncate_to(first_offset)
        self.load(self.rolling_base_ms)

    def truncate_to(self, offset: int) -> None:
        """Drop the batch holding ``offset`` and every later one."""
        found = self.find(offset)
        if found is None:
            return
        position, header = found
        self.truncate_to_position(position)
        self.offset_index.truncate_to(header.base_offset)
        self.time_index.truncate_to(header.base_offset)
        self.txn_index.truncate_to(header.base_offset)
        self.load(self.rolling_base_ms)

    def write_final_time_index_entry(self) -> None:
        """Record the segment's max timestamp, so a reload knows it without a scan."""
        if self.offset_of_max_timestamp >= 0:
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)

    def write_index_entries(self) -> None:
        """Write both indexes' new entries together, so the time index on disk never runs
        past the offset index (loading scans the batches after the last offset entry)."""
        self.offset_index.write_entries()
        self.time_index.write_entries()

    def flush(self) -> None:
        os.fsync(self._fd)
        self.offset_index.flush()
        self.time_index.flush()
        self.txn_index.flush()

    def close(self) -> None:
        """Close the file; index entries not yet written are dropped (a clean close
        flushes first; after any other the next start recovers the active segment)."""
        self.file.close()

    @property
    def paths(self) -> tuple[Path, Path, Path, Path]:
        """Its files; the aborted transaction index exists once an abort is in the segment."""
        return self.log_path, self.offset_index.path, self.time_index.path, self.txn_index.path

    def delete(self) -> None:
        """Close and remove the segment's files."""
        self.close()
        self.delete_files()

    def delete_files(self) -> None:
        """Remove the files; open handles keep reading the old content until closed."""
        for path in self.paths:
            path.unlink(missing_ok=True)
