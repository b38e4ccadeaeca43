"""A partition replica's log: ordered segments, its offsets, and the state kept beside them."""

from __future__ import annotations

import contextlib
import logging
import os
import random
import shutil
import threading
import time
from bisect import bisect_right
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from io import FileIO
from pathlib import Path

from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.records import BatchHeader, iter_batches, patch_batch
from ..protocol.transaction_markers import TransactionMarker, decode_marker, encode_marker
from . import timestamp_lookup
from .append_validation import validate_for_append
from .checkpoint import read_checkpoint, write_checkpoint
from .file_io import TMP_SUFFIX, fsync_directory, write_atomically
from .leader_epoch_cache import LeaderEpochCache
from .log_config import LogConfig
from .log_dir_failures import LogDirFailures, in_log_dir
from .log_transactions import LogTransactions, aborted_transactions
from .offset_file_names import base_offset_of
from .producer_state import CompletedTxn, ProducerEntry, ProducerStateManager
from .recovery import may_follow, recover_segment
from .retention import deletable_segments
from .segment import (
    INDEX_SUFFIX,
    LOG_SUFFIX,
    MAX_RELATIVE_OFFSET,
    TIME_INDEX_SUFFIX,
    LogSegment,
)
from .segment_swap import (
    SegmentSwap,
    commit_and_complete,
    read_cleaned_up_to,
    recover_swap,
    write_cleaned_up_to,
)
from .steady_clock import steady_clock
from .transaction_index import TXN_INDEX_SUFFIX, AbortedTxn

logger = logging.getLogger(__name__)

CLEAN_SHUTDOWN_FILE = "clean-shutdown"
OFFSETS_CHECKPOINT_FILE = "partition-offsets-checkpoint"
OFFSETS_CHECKPOINT_VERSION = 0
HIGH_WATERMARK = "high-watermark"
LOG_START_OFFSET = "log-start-offset"
RECOVERY_POINT = "recovery-point"


@dataclass(frozen=True)
class AppendInfo:
    first_offset: int  # for a duplicate: the offsets the original batch got
    last_offset: int
    log_append_time: int  # -1 unless LogAppendTime
    log_start_offset: int
    duplicate: bool  # an idempotent producer's retry of a batch already in the log


@dataclass(frozen=True)
class FileRegion:
    """Bytes of a segment file to send as they are (``os.sendfile`` / ``loop.sendfile``)."""

    file: FileIO  # unbuffered, read-only, owned by the segment
    position: int
    length: int

    def read(self) -> bytes:
        """The region's bytes; OSError if the segment shrank meanwhile (a truncation)."""
        data = os.pread(self.file.fileno(), self.length, self.position)
        if len(data) != self.length:
            raise OSError(f"segment shrank under a read of {self.length} bytes")
        return data

    def blocks(self, size: int) -> Iterator[FileRegion]:
        """The region cut into consecutive regions of at most ``size`` bytes."""
        for start in range(0, self.length, size):
            yield FileRegion(self.file, self.position + start, min(size, self.length - start))


@dataclass(frozen=True)
class ReadResult:
    regions: tuple[FileRegion, ...]  # whole batches, in offset order
    size: int
    log_start_offset: int
    log_end_offset: int
    next_offset: int = -1  # the offset after the last batch returned (-1: nothing returned)


class PartitionLog:
    """The segmented log of one partition replica in its own directory.

    Appends go straight to the file with ``os.write``, so a process crash loses
    nothing an append returned for; ``fsync`` happens per ``flush.messages`` /
    ``flush.ms``, at segment roll and at close. Not thread-safe: use it from
    one thread (the event loop); the log cleaner's thread only reads sealed
    segment files and writes files of its own (see ``log_cleaner``).

    Files of deleted or replaced segments are unlinked at once but their
    handles stay open for ``file.delete.delay.ms``, so fetch responses still
    sending from them finish, as Kafka defers the deletion itself.

    An I/O error takes the log's whole directory offline (``LogDirFailures``): a
    failed append is rolled back first, and from then on the log answers
    KAFKA_STORAGE_ERROR and writes nothing more.
    """

    def __init__(
        self,
        directory: Path,
        config: LogConfig,
        clock: Callable[[], float],
        failures: LogDirFailures,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.directory = directory
        self.config = config
        self._clock = clock  # timestamps: LogAppendTime, retention.ms
        self._steady = steady_clock(clock, monotonic)  # ages: segment.ms, flush.ms, deletes
        self.failures = failures
        self._segments: list[LogSegment] = []
        self.log_start_offset = 0
        self._high_watermark = 0
        self._recovery_point = 0
        self._checkpointed: tuple[int, int, int] | None = None  # last offsets written
        # checkpoint() may run on the maintenance thread; delete() must not race it
        self._checkpoint_lock = threading.Lock()
        self._epoch_cache = LeaderEpochCache(directory)
        self._producer_state = ProducerStateManager(directory)
        self._transactions = LogTransactions()
        self._unflushed_messages = 0
        self._last_flush_ms = self._steady_ms()
        self._roll_jitter_ms = self._new_roll_jitter()
        self._cleaned_up_to = 0
        self._retired: list[tuple[int, LogSegment]] = []  # (when to close, segment)
        self._closed = False

    @classmethod
    def open(
        cls,
        directory: Path,
        config: LogConfig,
        *,
        clock: Callable[[], float] = time.time,
        failures: LogDirFailures | None = None,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> PartitionLog:
        """Open (creating if needed) the log in ``directory``, recovering after an unclean
        stop; ``failures`` is shared by the logs of a broker (a directory goes offline as a
        whole)."""
        directory.mkdir(parents=True, exist_ok=True)
        for leftover in directory.glob("*" + TMP_SUFFIX):
            leftover.unlink()
        log = cls(directory, config, clock, failures or LogDirFailures(), monotonic)
        log._load()
        return log

    # --- loading -------------------------------------------------------------------------------

    def _load(self) -> None:
        marker = self.directory / CLEAN_SHUTDOWN_FILE
        clean = marker.exists()
        recover_swap(self.directory)
        self._cleaned_up_to = read_cleaned_up_to(self.directory)
        offsets = self._read_offsets()
        now_ms = self._steady_ms()
        bases = sorted(base_offset_of(path) for path in self.directory.glob("*" + LOG_SUFFIX))
        for suffix in (INDEX_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX):
            for path in self.directory.glob("*" + suffix):
                if base_offset_of(path) not in bases:
                    path.unlink()
        self._segments = [LogSegment(self.directory, base, now_ms) for base in bases]
        fresh = not self._segments  # nothing to recover
        if fresh:
            start = offsets.get(LOG_START_OFFSET, 0)
            self._segments = [LogSegment.create(self.directory, start, now_ms)]
        recovery_point = offsets.get(RECOVERY_POINT, 0)
        trusted = clean or fresh
        unsafe = len(self._segments) if trusted else self._segment_index(recovery_point)
        for index in range(unsafe):
            if not self._segments[index].load(now_ms):
                logger.warning(
                    "%s: damaged segment or index, recovering", self._segments[index].log_path
                )
                unsafe = index
                break
        recovered_from = self._recover(unsafe)
        log_end = self.log_end_offset
        first_base = self._segments[0].base_offset
        self.log_start_offset = min(max(offsets.get(LOG_START_OFFSET, 0), first_base), log_end)
        self._recovery_point = log_end if clean else min(recovery_point, log_end)
        self.high_watermark = offsets.get(HIGH_WATERMARK, 0)
        self._epoch_cache.truncate_from_end(log_end)
        self._rebuild_producer_state(recovered_from)
        if clean:
            # a later crash must not find the marker and skip recovery
            marker.unlink()
            fsync_directory(self.directory)

    def _recover(self, first: int) -> int:
        """Re-validate segments from index ``first`` on; drop any that no longer follow on.
        Returns where the recovered part starts (the log end when nothing needed it)."""
        if first >= len(self._segments):
            return self.log_end_offset
        recovered_from = self._segments[first].base_offset
        logger.info(
            "%s: recovering from segment %d", self.directory.name, self._segments[first].base_offset
        )
        expected = self._segments[first - 1].next_offset if first else self._segments[0].base_offset
        gaps_below = self._cleaned_up_to
        size_before = self.size_bytes
        for index in range(first, len(self._segments)):
            segment = self._segments[index]
            if not may_follow(segment.base_offset, expected, gaps_below):
                self._delete_segments(index)  # what follows a cut no longer continues the log
                break
            expected = recover_segment(
                segment, segment.base_offset, self.config.index_interval_bytes, gaps_below
            )
        dropped = size_before - self.size_bytes
        if dropped:
            # a replica then fetches the rest again from its leader
            logger.warning(
                "%s: truncated at offset %d after a torn or corrupt batch, dropping %d bytes",
                self.directory.name,
                self.log_end_offset,
                dropped,
            )
        return recovered_from

    def _read_offsets(self) -> dict[str, int]:
        rows = read_checkpoint(self.directory / OFFSETS_CHECKPOINT_FILE, OFFSETS_CHECKPOINT_VERSION)
        return {name: int(value) for name, value in rows or []}

    def _rebuild_producer_state(self, replay_from_at_most: int | None = None) -> None:
        """Load the newest snapshot (at or before ``replay_from_at_most``, where segments
        whose aborted transaction indexes must be rebuilt start) and replay the rest."""
        end = self.log_end_offset
        start = self._producer_state.load_snapshot(
            self._segments[0].base_offset,
            end if replay_from_at_most is None else min(replay_from_at_most, end),
        )
        self._transactions.forget_completed()
        batches = (
            # only a control batch (a marker) is read again
            (
                header,
                decode_marker(segment.read_bytes(position, header.size))
                if header.is_control
                else None,
            )
            for segment, position, header in self._batches_from(start)
        )
        self._complete_all(self._producer_state.replay(batches))

    # --- offsets -------------------------------------------------------------------------------

    @property
    def offline(self) -> bool:
        """Whether the log's directory is offline after an I/O error (``LogDirFailures``)."""
        failures = self.failures  # asked per partition on every follower fetch
        return failures.any_offline and failures.is_offline(self.directory.parent)

    @property
    def log_end_offset(self) -> int:
        """The offset the next appended record gets."""
        return self._segments[-1].next_offset

    @property
    def high_watermark(self) -> int:
        return self._high_watermark

    @high_watermark.setter
    def high_watermark(self, offset: int) -> None:
        self._high_watermark = min(max(offset, self.log_start_offset), self.log_end_offset)
        self._transactions.high_watermark_moved(self._high_watermark)

    @property
    def last_stable_offset(self) -> int:
        """Where a read_committed reader stops: before the earliest transaction still open
        or not yet replicated as complete; the high watermark when there is none."""
        return self._transactions.last_stable_offset(
            self._producer_state.open_transactions(), self._high_watermark, self.log_start_offset
        )

    @property
    def size_bytes(self) -> int:
        return sum(segment.size for segment in self._segments)

    @property
    def segment_count(self) -> int:
        return len(self._segments)

    @property
    def segments(self) -> tuple[LogSegment, ...]:
        """The segments in offset order; the last one is active."""
        return tuple(self._segments)

    @property
    def cleaned_up_to(self) -> int:
        """The cleaner checkpoint: the first offset the cleaner has not compacted."""
        return self._cleaned_up_to

    # --- appends -------------------------------------------------------------------------------

    @in_log_dir("appending to")
    def append_as_leader(
        self, records: bytes | bytearray | memoryview, leader_epoch: int
    ) -> AppendInfo:
        """Validate, convert per the topic's settings, assign offsets from the log end,
        check producer sequences, and write."""
        headers = self._validate(records)
        if any(header.is_control for header in headers):
            raise KafkaError(
                ErrorCode.invalid_record, "Clients are not allowed to write control records"
            )
        # the newest timestamp so far: LogAppendTime does not go back when the clock steps back
        newest = max(segment.max_timestamp for segment in self._segments[-2:])
        validated = validate_for_append(
            bytearray(records), headers, self.config, self._now_ms(), newest
        )
        buffer, headers = validated.data, validated.headers
        producers = self._producer_state.begin()
        next_offset = self.log_end_offset
        placed: list[BatchHeader] = []
        for header in headers:
            if header.has_producer_id:
                duplicate = producers.check(header)
                if duplicate is not None:
                    return AppendInfo(
                        duplicate.first_offset,
                        duplicate.last_offset,
                        -1,
                        self.log_start_offset,
                        duplicate=True,
                    )
            patch_batch(buffer, header.position, next_offset, leader_epoch)
            header = header._replace(base_offset=next_offset, partition_leader_epoch=leader_epoch)
            if header.has_producer_id:
                producers.record(header)
            placed.append(header)
            next_offset = header.next_offset
        # before the write: recovery drops an epoch entry beyond the log end, never misses one
        self._epoch_cache.assign(leader_epoch, placed[0].base_offset)
        self._write(buffer, placed)
        self._producer_state.commit(producers)
        return AppendInfo(
            placed[0].base_offset,
            placed[-1].last_offset,
            validated.log_append_time,
            self.log_start_offset,
            duplicate=False,
        )

    @in_log_dir("appending a marker to")
    def append_marker(self, marker: TransactionMarker, leader_epoch: int) -> AppendInfo:
        """Append a transaction marker the coordinator sent (WriteTxnMarkers), completing
        the producer's open transaction, if any."""
        producers = self._producer_state.begin()
        producers.check_marker(marker)
        buffer = bytearray(encode_marker(marker, self._now_ms()))
        offset = self.log_end_offset
        patch_batch(buffer, 0, offset, leader_epoch)
        [header] = iter_batches(buffer)
        self._epoch_cache.assign(leader_epoch, offset)
        self._write(buffer, [header])
        completed = producers.record_marker(marker, offset)
        self._producer_state.commit(producers)
        if completed is not None:
            self._complete_all([completed])
        return AppendInfo(offset, offset, -1, self.log_start_offset, duplicate=False)

    @in_log_dir("appending to")
    def append_as_follower(self, records: bytes | bytearray | memoryview) -> AppendInfo:
        """Append batches whose offsets the leader assigned; they must continue this log,
        with gaps only where the leader's cleaner removed records."""
        headers = self._validate(records)
        expected = self.log_end_offset
        gaps = False
        for header in headers:
            if header.base_offset < expected:
                raise KafkaError(
                    ErrorCode.offset_out_of_range,
                    f"batch at offset {header.base_offset} does not follow offset {expected - 1}",
                )
            gaps = gaps or header.base_offset > expected
            expected = header.next_offset
        if gaps and expected > self._cleaned_up_to:
            # a copy of the leader's compacted range; recorded before the write so that
            # recovery accepts its gaps
            self._set_cleaned_up_to(expected)
        for header in headers:
            self._epoch_cache.assign(header.partition_leader_epoch, header.base_offset)
        self._write(records, headers)
        view = memoryview(records)
        batches = [
            (
                header,
                decode_marker(view[header.position : header.position + header.size])
                if header.is_control
                else None,
            )
            for header in headers
        ]
        self._complete_all(self._producer_state.replay(batches))
        return AppendInfo(
            headers[0].base_offset,
            headers[-1].last_offset,
            -1,
            self.log_start_offset,
            duplicate=False,
        )

    def _validate(self, records: bytes | bytearray | memoryview) -> list[BatchHeader]:
        headers = list(iter_batches(records))
        if not headers:
            raise KafkaError(ErrorCode.corrupt_message, "no record batches")
        # Per batch, as in Kafka: a follower's (or a move's) chunk of many batches may be
        # larger than a segment, and goes whole into a new one.
        largest = max(header.size for header in headers)
        if largest > self.config.segment_bytes:
            raise KafkaError(
                ErrorCode.record_list_too_large,
                f"a batch of {largest} bytes exceeds segment.bytes {self.config.segment_bytes}",
            )
        return headers

    def _write(self, data: bytes | bytearray | memoryview, headers: Sequence[BatchHeader]) -> None:
        now_ms = self._steady_ms()
        segment = self._segments[-1]
        if segment.size > 0 and (
            segment.size + len(data) > self.config.segment_bytes
            or now_ms - segment.rolling_base_ms > self.config.roll_ms - self._roll_jitter_ms
            or headers[-1].last_offset - segment.base_offset > MAX_RELATIVE_OFFSET
            or segment.indexes_full(self.config.segment_index_bytes)
        ):
            segment = self._roll(now_ms)
        position = segment.size
        unflushed = self._unflushed_messages + sum(header.records_count for header in headers)
        try:
            segment.append(data, headers, self.config.index_interval_bytes, now_ms)
            if (
                unflushed >= self.config.flush_messages
                or now_ms - self._last_flush_ms >= self.config.flush_ms
            ):
                self._flush()
            else:
                self._unflushed_messages = unflushed
        except OSError:
            self._undo_append(segment, position, headers[0].base_offset)
            raise

    def _undo_append(self, segment: LogSegment, position: int, first_offset: int) -> None:
        """Cut what a failed append wrote from ``position`` (batches from ``first_offset``),
        so that no unanswered batch stays for a retry to duplicate or a restart to keep.
        Where even that fails, the directory is offline before any answer and the next
        start recovers the files."""
        try:
            segment.rollback(position, first_offset)
            self._epoch_cache.truncate_from_end(self.log_end_offset)
        except OSError as error:
            logger.warning(
                "%s: could not undo a failed append at offset %d: %s",
                self.directory.name,
                first_offset,
                error,
            )

    def _roll(self, now_ms: int) -> LogSegment:
        """Seal the active segment and start a new one at the log end."""
        self._segments[-1].write_final_time_index_entry()
        self._flush()
        self._producer_state.take_snapshot(self.log_end_offset)
        segment = LogSegment.create(self.directory, self.log_end_offset, now_ms)
        self._segments.append(segment)
        self._roll_jitter_ms = self._new_roll_jitter()
        logger.info("%s: rolled new segment at offset %d", self.directory.name, segment.base_offset)
        return segment

    def _new_roll_jitter(self) -> int:
        """How much earlier than segment.ms the next segment rolls (segment.jitter.ms)."""
        jitter = min(self.config.segment_jitter_ms, self.config.roll_ms)
        return random.randrange(jitter) if jitter > 0 else 0

    # --- reads ---------------------------------------------------------------------------------

    @in_log_dir("reading")
    def read(
        self,
        fetch_offset: int,
        max_bytes: int,
        max_offset: int | None = None,
        min_one_batch: bool = True,
    ) -> ReadResult:
        """File regions of whole batches from the one holding ``fetch_offset``.

        Stops before a batch starting at or after ``max_offset`` and within
        ``max_bytes``, except that with ``min_one_batch`` the first batch is
        returned whatever its size.
        """
        if not self.log_start_offset <= fetch_offset <= self.log_end_offset:
            raise KafkaError(
                ErrorCode.offset_out_of_range,
                f"offset {fetch_offset} outside [{self.log_start_offset}, {self.log_end_offset}]",
            )
        upper = self.log_end_offset if max_offset is None else min(max_offset, self.log_end_offset)
        regions: list[FileRegion] = []
        total = 0
        offset = fetch_offset
        next_offset = -1
        for segment in self._segments[self._segment_index(fetch_offset) :]:
            if offset >= upper:
                break
            found = segment.find(offset)
            if found is None:
                continue
            start = found[0]
            if segment.next_offset <= upper and total + segment.size - start <= max_bytes:
                end, complete, after = segment.size, True, segment.next_offset
            else:
                end, complete, after = self._scan_region(
                    segment, start, upper, max_bytes - total, min_one_batch and not regions
                )
            if end > start:
                regions.append(FileRegion(segment.file, start, end - start))
                total += end - start
                next_offset = after
            if not complete:
                break
            offset = segment.next_offset
        return ReadResult(
            tuple(regions), total, self.log_start_offset, self.log_end_offset, next_offset
        )

    @staticmethod
    def _scan_region(
        segment: LogSegment, start: int, upper: int, budget: int, take_first: bool
    ) -> tuple[int, bool, int]:
        """(end position, whether the segment's end was reached, next offset) of the
        batches from ``start`` that fit."""
        end, after = start, -1
        for position, header in segment.headers_from(start):
            if header.base_offset >= upper:
                return end, False, after
            if position + header.size - start > budget and not (take_first and end == start):
                return end, False, after
            end, after = position + header.size, header.next_offset
        return end, True, after

    def aborted_transactions(self, fetch_offset: int, upper_bound: int) -> list[AbortedTxn]:
        """The aborted transactions a read_committed fetch of ``[fetch_offset, upper_bound)``
        returns."""
        segments = self._segments[self._segment_index(fetch_offset) :]
        return aborted_transactions(segments, fetch_offset, upper_bound)

    def _complete_all(self, completed: Sequence[CompletedTxn]) -> None:
        """Index the aborted ones among transactions just completed, and hold the LSO
        below those not yet replicated."""
        for transaction in completed:
            self._transactions.complete(
                transaction,
                self._segments[self._segment_index(transaction.last_offset)],
                self._producer_state.open_transactions(),
                self._high_watermark,
            )

    def _batches_from(self, offset: int) -> Iterator[tuple[LogSegment, int, BatchHeader]]:
        """(segment, position, header) of every batch holding ``offset`` or later ones."""
        for segment in self._segments[self._segment_index(offset) :]:
            for position, header in segment.headers_from(segment.offset_index.lookup(offset)):
                if header.last_offset >= offset:
                    yield segment, position, header

    def offset_for_timestamp(self, timestamp: int) -> tuple[int, int] | None:
        """(offset, timestamp) of the first record whose timestamp >= ``timestamp``, or None."""
        return timestamp_lookup.offset_for_timestamp(
            self._segments, self.log_start_offset, timestamp
        )

    def max_timestamp(self) -> tuple[int, int]:
        """(timestamp, offset) of the first record with the largest timestamp; (-1, -1) if none."""
        return timestamp_lookup.max_timestamp(self._segments, self.log_start_offset)

    @property
    def producers(self) -> Mapping[int, ProducerEntry]:
        """The idempotent producers whose batches this log holds, by producer id."""
        return self._producer_state.producers

    def start_leader_epoch(self, epoch: int) -> None:
        """This replica leads from ``epoch`` on, starting at the log end: OffsetForLeaderEpoch
        then tells followers where the epochs before it ended (Kafka assigns it at election,
        not at the first append)."""
        self._epoch_cache.assign(epoch, self.log_end_offset)

    @property
    def latest_epoch(self) -> int:
        """The leader epoch of the last batch appended (-1 for an empty history)."""
        return self._epoch_cache.latest_epoch

    def epoch_for_offset(self, offset: int) -> int:
        """The leader epoch ``offset`` was written in; -1 where the history does not say."""
        return self._epoch_cache.epoch_for(offset)

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """OffsetForLeaderEpoch: (largest epoch <= ``epoch``, its end offset), or (-1, -1)."""
        return self._epoch_cache.end_offset_for(epoch, self.log_end_offset)

    # --- truncation ----------------------------------------------------------------------------

    @in_log_dir("truncating")
    def truncate_to(self, offset: int) -> None:
        """Drop every batch holding an offset >= ``offset`` (where a follower diverged)."""
        if offset >= self.log_end_offset:
            return
        if offset < self.log_start_offset:
            self.truncate_fully_and_start_at(offset)
            return
        index = self._segment_index(offset)
        self._delete_segments(index + 1)
        segment = self._segments[index]
        segment.truncate_to(offset)
        # a truncation undone by a power loss would resurrect diverged batches
        segment.flush()
        end = self.log_end_offset
        self._recovery_point = min(self._recovery_point, end)
        self._high_watermark = min(self._high_watermark, end)
        if self._cleaned_up_to > end:
            self._set_cleaned_up_to(end)
        self._epoch_cache.truncate_from_end(end)
        self._rebuild_producer_state()

    @in_log_dir("truncating")
    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Delete every segment and restart the empty log at ``offset``."""
        self._delete_segments(0)
        self._segments = [LogSegment.create(self.directory, offset, self._steady_ms())]
        self.log_start_offset = self._high_watermark = self._recovery_point = offset
        self._set_cleaned_up_to(offset)
        self._epoch_cache.clear()
        self._producer_state.reset()
        self._transactions.forget_completed()
        self.checkpoint()

    def _delete_segments(self, first: int) -> None:
        for segment in self._segments[first:]:
            segment.delete()
        del self._segments[first:]
        fsync_directory(self.directory)

    # --- retention and cleaning -----------------------------------------------------------------

    @in_log_dir("deleting segments of")
    def delete_retention_segments(self, now_ms: int | None = None) -> int:
        """Delete the oldest segments past retention.ms or retention.bytes (cleanup.policy
        delete) or below the log start offset; return the bytes deleted."""
        now_ms = self._now_ms() if now_ms is None else now_ms
        self._close_retired(self._steady_ms())
        count = deletable_segments(
            self._segments, self.config, now_ms, self._high_watermark, self.log_start_offset
        )
        return self._delete_oldest_segments(count, self._steady_ms()) if count else 0

    @in_log_dir("deleting records of")
    def advance_log_start_offset(self, offset: int) -> None:
        """DeleteRecords: make ``offset`` the first readable one, deleting segments below it."""
        if not 0 <= offset <= self._high_watermark:
            raise KafkaError(
                ErrorCode.offset_out_of_range,
                f"offset {offset} outside [0, high watermark {self._high_watermark}]",
            )
        if offset <= self.log_start_offset:
            return
        self.log_start_offset = offset
        count = deletable_segments(
            self._segments,
            self.config,
            self._now_ms(),
            self._high_watermark,
            offset,
            by_retention=False,
        )
        if count:
            self._delete_oldest_segments(count, self._steady_ms())
        else:
            self._log_start_moved()

    def _delete_oldest_segments(self, count: int, now_ms: int) -> int:
        if count == len(self._segments):
            self._roll(now_ms)  # a log always has an active segment
        doomed = self._segments[:count]
        del self._segments[:count]
        for segment in doomed:
            segment.delete_files()
            self._retire(segment, now_ms)
        fsync_directory(self.directory)
        self.log_start_offset = max(self.log_start_offset, self._segments[0].base_offset)
        self._log_start_moved()
        deleted = sum(segment.size for segment in doomed)
        logger.info(
            "%s: deleted %d segments (%d bytes), log start offset now %d",
            self.directory.name,
            count,
            deleted,
            self.log_start_offset,
        )
        return deleted

    def _log_start_moved(self) -> None:
        self._epoch_cache.truncate_from_start(self.log_start_offset)
        self._producer_state.delete_snapshots_before(self._segments[0].base_offset)
        self.checkpoint()

    def install_cleaned(
        self, swap: SegmentSwap, expected: Sequence[tuple[LogSegment, int]]
    ) -> bool:
        """Replace segments by the cleaned ones of ``swap``, if the log still holds the
        ``expected`` (segment, size) pairs the cleaning read and they are sealed; False if not."""
        replaced = {base for group in swap.groups for base in group}
        current = {segment.base_offset: segment for segment in self._segments[:-1]}
        if self._closed or any(
            current.get(segment.base_offset) is not segment or segment.size != size
            for segment, size in expected
            if segment.base_offset in replaced
        ):
            return False
        commit_and_complete(self.directory, swap)
        now_ms = self._steady_ms()
        new_bases = {swap.new_base(group) for group in swap.groups}
        segments = []
        for segment in self._segments:
            if segment.base_offset not in replaced:
                segments.append(segment)
                continue
            self._retire(segment, now_ms)  # its files were replaced or deleted by the swap
            if segment.base_offset in new_bases:
                segments.append(self._open_cleaned(segment.base_offset, swap, now_ms))
        self._segments = segments
        self._cleaned_up_to = swap.cleaned_up_to
        return True

    def _open_cleaned(self, base_offset: int, swap: SegmentSwap, now_ms: int) -> LogSegment:
        segment = LogSegment(self.directory, base_offset, now_ms)
        if not segment.load(now_ms):
            recover_segment(
                segment, base_offset, self.config.index_interval_bytes, swap.cleaned_up_to
            )
        return segment

    def _set_cleaned_up_to(self, offset: int) -> None:
        write_cleaned_up_to(self.directory, offset)
        self._cleaned_up_to = offset

    def _retire(self, segment: LogSegment, now_ms: int) -> None:
        self._retired.append((now_ms + self.config.file_delete_delay_ms, segment))

    def _close_retired(self, now_ms: int | None = None) -> None:
        """Close the handles of retired segments whose delay passed (all of them if no time)."""
        keep = []
        for close_at, segment in self._retired:
            if now_ms is None or close_at <= now_ms:
                segment.close()
            else:
                keep.append((close_at, segment))
        self._retired = keep

    # --- durability and lifecycle --------------------------------------------------------------

    @in_log_dir("flushing")
    def flush(self) -> None:
        """fsync every segment that may hold unflushed data, and advance the recovery point."""
        self._flush()

    def _flush(self) -> None:
        for segment in self._segments[self._segment_index(self._recovery_point) :]:
            segment.flush()
        self._recovery_point = self.log_end_offset
        self._unflushed_messages = 0
        self._last_flush_ms = self._steady_ms()

    def checkpoint(self) -> None:
        """Persist the high watermark, log start offset and recovery point.

        The leader-epoch cache needs no call: it is written on every change. Unchanged
        offsets are not written again (a write and two fsyncs per idle partition and interval).
        Safe to call from another thread than the one appending (the offsets are read
        once, as plain ints); a closed or deleted log is left alone.
        """
        with self._checkpoint_lock:
            offsets = (self._high_watermark, self.log_start_offset, self._recovery_point)
            if self._closed or self.offline or offsets == self._checkpointed:
                return
            try:
                self._write_offsets(offsets)
            except OSError as error:
                self.failures.fail(
                    self.directory.parent, f"checkpointing {self.directory.name}", error
                )
                return
            self._checkpointed = offsets

    def _write_offsets(self, offsets: tuple[int, int, int]) -> None:
        write_checkpoint(
            self.directory / OFFSETS_CHECKPOINT_FILE,
            OFFSETS_CHECKPOINT_VERSION,
            [
                (HIGH_WATERMARK, offsets[0]),
                (LOG_START_OFFSET, offsets[1]),
                (RECOVERY_POINT, offsets[2]),
            ],
        )

    def close(self) -> None:
        """Flush and checkpoint everything, then mark the shutdown clean."""
        if self._closed:
            return
        # offline: no clean-shutdown marker, so the next start recovers the files
        with contextlib.suppress(KafkaError):
            self._close_cleanly()
        self._close_files()

    @in_log_dir("closing")
    def _close_cleanly(self) -> None:
        self._segments[-1].write_final_time_index_entry()
        self._flush()
        self.checkpoint()
        self.failures.check(self.directory.parent)  # the checkpoint failed
        self._producer_state.take_snapshot(self.log_end_offset)
        write_atomically(self.directory / CLEAN_SHUTDOWN_FILE, b"")

    def delete(self) -> None:
        """Close the files and remove the log's directory."""
        with self._checkpoint_lock:
            if not self._closed:
                self._close_files()
            shutil.rmtree(self.directory)

    def _close_files(self) -> None:
        for segment in self._segments:
            segment.close()
        self._close_retired()
        self._closed = True

    def _segment_index(self, offset: int) -> int:
        """Index of the segment that holds ``offset`` (the first one if it is below them all)."""
        return max(bisect_right(self._segments, offset, key=lambda s: s.base_offset) - 1, 0)

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    def _steady_ms(self) -> int:
        return int(self._steady() * 1000)
