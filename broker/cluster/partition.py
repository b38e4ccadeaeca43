"""One partition replica on this broker: its log, its leadership state, the
followers it tracks while leading, and the waiters that a change wakes
(long-polling fetches, acks=all produces)."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple, Protocol

from odradek.broker.cluster.metadata_image import PartitionState
from odradek.broker.log.partition_log import AppendInfo, PartitionLog, ReadResult
from odradek.broker.log.producer_state import ProducerEntry
from odradek.broker.log.transaction_index import AbortedTxn
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.records import HEADER_SIZE, read_header
from odradek.broker.protocol.transaction_markers import TransactionMarker

log = logging.getLogger(__name__)

# ListOffsets' special timestamps (Kafka's ListOffsetsRequest constants).
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
LATEST_TIERED_TIMESTAMP = -5
EARLIEST_PENDING_UPLOAD_TIMESTAMP = -6


READ_COMMITTED = 1
"""Fetch's and ListOffsets' isolation_level for read_committed readers."""


@dataclass(frozen=True)
class FoundOffset:
    """ListOffsets' answer for one partition: -1 in each field that is unknown."""

    timestamp: int
    offset: int
    leader_epoch: int


NOT_FOUND = FoundOffset(-1, -1, -1)


class PartitionKey(NamedTuple):
    """A partition by topic name and index; a tuple, so hashed in C (every fetch looks
    up each of its partitions by one)."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True)
class ReplicaInLogDir:
    """A replica's log, or its copy being moved (``is_future``), in one log directory."""

    log_dir: Path
    size_bytes: int
    offset_lag: int
    is_future: bool = False


@dataclass
class FollowerProgress:
    """What the leader knows of one follower from its fetches."""

    log_end_offset: int = -1
    caught_up_at: float = 0.0  # last time it had everything the leader had
    last_fetch_at: float = 0.0
    leader_end_at_last_fetch: int = 0


class QuietReader(Protocol):
    """A fetch session's partition at rest: told once, at the next change (``watch_quiet``)."""

    def stirred(self, grown: bool) -> None: ...


@dataclass(eq=False)
class VerificationGuard:
    """A producer's verification under way in one partition (KIP-890), compared by
    identity: a marker between the coordinator's answer and the append withdraws it."""

    epoch: int
    """The highest epoch verified under it."""
    epoch_bumps: bool
    """Transaction version 2: the previous transaction's marker carries the next epoch."""
    lowest_sequence: int
    """The lowest base sequence verified under it in ``epoch``: a batch after it cannot
    open the transaction here (that batch's retry must come first)."""


@dataclass(frozen=True)
class Verification:
    """A Produce under KIP-890's check: the guard its producer's transaction was verified
    under (``verification_guard``), None when the request found no batch to verify."""

    guard: VerificationGuard | None = None


class Partition:
    """Serves produce and fetch for one replica; only the leader accepts produce."""

    def __init__(
        self,
        key: PartitionKey,
        log: PartitionLog,
        state: PartitionState,
        node_id: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.key = key
        self.log = log
        self.state = state
        self._node_id = node_id
        self._clock = clock
        self._followers: dict[int, FollowerProgress] = {}
        self._changed: asyncio.Future[None] | None = None
        self._grown: asyncio.Future[None] | None = None  # not for high watermarks alone
        self._quiet_readers: set[QuietReader] = set()
        self.fenced = False  # set while this broker's coordination session is lost
        # The copy growing in another log directory while this replica moves there.
        self.future_log: PartitionLog | None = None
        self._isr_changed_at = self._clock()
        # Followers an ISR change being written adds (see ``expanding``).
        self._joining: frozenset[int] = frozenset()
        # producer id -> the guard of the verification of its transaction under way (KIP-890)
        self._verification_guards: dict[int, VerificationGuard] = {}
        # The log end when this replica last became leader (Kafka's leaderEpochStartOffset).
        self._epoch_start_offset = -1
        if state.leader == node_id:
            self._start_leading()
        self._maybe_advance_high_watermark()

    # --- roles ------------------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        return self.named_leader and not self.fenced

    @property
    def named_leader(self) -> bool:
        """The metadata names this replica the leader (it leads unless fenced)."""
        return self.state.leader == self._node_id

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark

    def apply_state(self, state: PartitionState) -> bool:
        """Take a new state from the metadata image; True if this replica became leader."""
        old, self.state = self.state, state
        self._joining = frozenset()
        if old.isr != state.isr:
            self._isr_changed_at = self._clock()
        became_leader = state.leader == self._node_id and (
            old.leader != self._node_id or old.leader_epoch != state.leader_epoch
        )
        if became_leader:
            self._start_leading()
        self._maybe_advance_high_watermark()
        self._notify()
        return became_leader

    def set_fenced(self, fenced: bool) -> None:
        """Fenced (this broker's coordination session lost, or the replica deleted here), it
        leads nothing; the fetch sessions resting on it find out at their next fetch."""
        self.fenced = fenced
        self._stir_quiet(grown=False)

    def _start_leading(self) -> None:
        # Followers get a full lag window to show up before they can leave the ISR.
        now, end = self._clock(), self.log.log_end_offset
        self._followers = {
            replica: FollowerProgress(
                caught_up_at=now, last_fetch_at=now, leader_end_at_last_fetch=end
            )
            for replica in self.state.replicas
            if replica != self._node_id
        }
        self.log.start_leader_epoch(self.state.leader_epoch)
        self._epoch_start_offset = end
        self._verification_guards.clear()  # verifications began under another leader
        log.info("%s: leader at epoch %d", self.key, self.state.leader_epoch)

    def check_leader(self, current_leader_epoch: int = -1) -> None:
        """Raise the error Kafka gives a client that talks to the wrong replica."""
        if current_leader_epoch >= 0:
            if current_leader_epoch < self.state.leader_epoch:
                raise KafkaError(ErrorCode.fenced_leader_epoch)
            if current_leader_epoch > self.state.leader_epoch:
                raise KafkaError(ErrorCode.unknown_leader_epoch)
        if not self.is_leader:
            raise KafkaError(ErrorCode.not_leader_or_follower)

    def check_follower(self, current_leader_epoch: int = -1) -> None:
        """Raise unless this replica may serve a consumer as a follower (KIP-392)."""
        if current_leader_epoch >= 0 and current_leader_epoch != self.state.leader_epoch:
            code = (
                ErrorCode.fenced_leader_epoch
                if current_leader_epoch < self.state.leader_epoch
                else ErrorCode.unknown_leader_epoch
            )
            raise KafkaError(code)
        if self.fenced or self.state.leader < 0:
            raise KafkaError(ErrorCode.not_leader_or_follower)

    # --- leader side ------------------------------------------------------------------------

    def append_as_leader(
        self,
        records: bytes,
        required_acks: int,
        min_insync: int,
        verification: Verification | None = None,
    ) -> AppendInfo:
        """With ``verification`` (KIP-890), a transactional batch that would open a
        transaction here is refused unless its producer's guard is the one verified: a
        marker since (the transaction ended meanwhile) has withdrawn it."""

        def write(epoch: int) -> AppendInfo:
            opener = None
            if verification is not None:
                opener = self.transaction_to_verify(records)
                guard = self._verification_guards.get(opener[0]) if opener else None
                if opener is not None and (guard is None or guard is not verification.guard):
                    raise KafkaError(
                        ErrorCode.invalid_txn_state,
                        "the batch would open a transaction its coordinator has not confirmed",
                    )
                if opener is not None and guard is not None:
                    sequence = read_header(records).base_sequence
                    if sequence > guard.lowest_sequence:
                        raise KafkaError(
                            ErrorCode.out_of_order_sequence_number,
                            f"producer {opener[0]} sequence {sequence} would open a transaction "
                            f"before sequence {guard.lowest_sequence}, seen first",
                        )
            info = self.log.append_as_leader(records, epoch)
            if opener is not None:
                del self._verification_guards[opener[0]]
            return info

        return self._append_as_leader(write, required_acks == -1, min_insync)

    def transaction_to_verify(self, records: bytes) -> tuple[int, int] | None:
        """The (producer id, epoch) of a transactional batch that would open a transaction
        here, which its coordinator must confirm first (KIP-890); None for any other. A
        batch of a newer epoch than the open transaction's belongs to the producer's next
        transaction (transaction version 2 bumps the epoch at each end)."""
        if len(records) < HEADER_SIZE:
            return None  # the append refuses it
        header = read_header(records)
        if not header.is_transactional or header.is_control:
            return None
        entry = self.log.producers.get(header.producer_id)
        if entry is not None and entry.in_transaction and entry.epoch == header.producer_epoch:
            return None
        return header.producer_id, header.producer_epoch

    def verification_guard(
        self, producer_id: int, epoch: int, epoch_bumps: bool, base_sequence: int
    ) -> VerificationGuard:
        """The guard of a verification of ``producer_id``'s transaction (the one under way,
        if any), which its next marker here withdraws; it keeps the lowest sequence its
        epoch's batches were verified with, as Kafka's VerificationStateEntry does: a batch
        that fails after its verification (the coordinator refused it for now) is retried,
        and the producer's later batches must not open the transaction before it."""
        guard = self._verification_guards.setdefault(
            producer_id, VerificationGuard(epoch, epoch_bumps, base_sequence)
        )
        if epoch > guard.epoch:
            guard.epoch, guard.lowest_sequence = epoch, base_sequence
        elif epoch == guard.epoch:
            guard.lowest_sequence = min(guard.lowest_sequence, base_sequence)
        return guard

    def append_marker(self, marker: TransactionMarker, min_insync: int) -> AppendInfo:
        """WriteTxnMarkers as leader: the marker appended, to be replicated as acks=all. It
        withdraws the producer's verification under way, unless that one is of the next
        transaction of version 2, whose epoch the marker already carries (as in Kafka)."""
        guard = self._verification_guards.get(marker.producer_id)
        if guard is not None and not (guard.epoch_bumps and guard.epoch == marker.producer_epoch):
            del self._verification_guards[marker.producer_id]
        return self._append_as_leader(
            lambda epoch: self.log.append_marker(marker, epoch), True, min_insync
        )

    def _append_as_leader(
        self, write: Callable[[int], AppendInfo], all_replicas: bool, min_insync: int
    ) -> AppendInfo:
        """``write`` in the current leader epoch; with ``all_replicas`` (acks=all) only while
        the ISR holds min.insync.replicas."""
        self.check_leader()
        if all_replicas and len(self.state.isr) < min_insync:
            raise KafkaError(
                ErrorCode.not_enough_replicas,
                f"{len(self.state.isr)} in-sync replicas, min.insync.replicas is {min_insync}",
            )
        info = write(self.state.leader_epoch)
        self._maybe_advance_high_watermark()
        self._notify()
        return info

    async def wait_for_high_watermark(self, offset: int, timeout_s: float) -> None:
        """Wait until ``offset`` is committed; raises if leadership is lost or time runs out."""
        epoch = self.state.leader_epoch
        try:
            async with asyncio.timeout(timeout_s):
                while self.high_watermark < offset:
                    if not self.is_leader or self.state.leader_epoch != epoch:
                        raise KafkaError(ErrorCode.not_leader_or_follower)
                    # Shielded: the future is shared, and a waiter that times out would
                    # otherwise cancel it for every other waiter and every later notify.
                    await asyncio.shield(self.wait_for_change())
        except TimeoutError:
            raise KafkaError(
                ErrorCode.request_timed_out, f"{self.key}: not replicated within {timeout_s}s"
            ) from None

    def check_enough_replicas_after_append(self, min_insync: int) -> None:
        """Raise if the ISR shrank below ``min_insync`` while an acks=all write waited:
        committed with fewer copies than promised, it is not acknowledged (Kafka's rule)."""
        if len(self.state.isr) < min_insync:
            raise KafkaError(
                ErrorCode.not_enough_replicas_after_append,
                f"{len(self.state.isr)} in-sync replicas, min.insync.replicas is {min_insync}",
            )

    def record_follower_fetch(self, replica: int, fetch_offset: int) -> None:
        """A follower asked for ``fetch_offset``: it holds everything before it."""
        now = self._clock()
        progress = self._followers.get(replica)
        if progress is None:
            progress = self._followers[replica] = FollowerProgress()
        grown = fetch_offset > progress.log_end_offset
        progress.log_end_offset = fetch_offset
        # Kafka's rule: caught up if it reached our end, or our end as of its previous fetch.
        if fetch_offset >= self.log.log_end_offset:
            progress.caught_up_at = now
        elif fetch_offset >= progress.leader_end_at_last_fetch:
            progress.caught_up_at = progress.last_fetch_at
        progress.last_fetch_at = now
        progress.leader_end_at_last_fetch = self.log.log_end_offset
        if grown:  # else the high watermark's inputs are as its last computation found them
            self._maybe_advance_high_watermark()

    def proposed_isr(self, lag_max_s: float, barred: Collection[int] = ()) -> PartitionState | None:
        """The ISR change this leader wants: followers lagging too long out, caught-up ones
        in, except ``barred`` brokers (shutting down, fenced or unregistered: as in Kafka's
        KIP-841, the controller would not let them in)."""
        if not self.is_leader:
            return None
        now = self._clock()
        isr = [self._node_id]
        for replica in self.state.replicas:
            if replica == self._node_id:
                continue
            progress = self._followers.get(replica)
            if progress is None:
                continue
            in_sync = replica in self.state.isr and now - progress.caught_up_at <= lag_max_s
            # Rejoining takes a fetch that caught up after the ISR last changed, so a
            # follower that just died or was removed is not added back on stale progress.
            rejoins = (
                replica not in self.state.isr
                and replica not in barred
                and progress.log_end_offset >= max(self.high_watermark, 0)
                and progress.caught_up_at > self._isr_changed_at
            )
            if in_sync or rejoins:
                isr.append(replica)
        ordered = tuple(r for r in self.state.replicas if r in isr)
        if set(ordered) == set(self.state.isr):
            return None
        return replace(self.state, isr=ordered)

    def expanding(self, proposed: PartitionState) -> None:
        """``proposed`` is being written: the followers it adds count for the high
        watermark from now until the image shows the outcome (Kafka's maximal ISR,
        KIP-497), so no write is committed without a replica the new ISR may elect."""
        self._joining = frozenset(proposed.isr) - frozenset(self.state.isr)

    @property
    def joining(self) -> frozenset[int]:
        """Followers an ISR change written but not yet seen adds."""
        return self._joining

    def expansion_not_written(self) -> None:
        """etcd holds the state the image has: the change ``expanding`` announced failed."""
        self._joining = frozenset()
        self._maybe_advance_high_watermark()  # a laggard that was joining no longer holds it

    def follower_lags(self) -> dict[int, int]:
        """Records each follower is behind this leader's log end (unknown followers: all)."""
        end = self.log.log_end_offset
        return {
            replica: end - max(progress.log_end_offset, 0)
            for replica, progress in self._followers.items()
        }

    # --- follower side ----------------------------------------------------------------------

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    @property
    def latest_epoch(self) -> int:
        """The leader epoch of the last batch in this replica's log (-1: none)."""
        return self.log.latest_epoch

    def truncate_to_leader(self, leader_epoch: int, leader_end: int) -> None:
        """Drop what the leader does not have: everything past the end the leader reports
        for this replica's latest epoch (``leader_epoch`` -1: past the high watermark)."""
        log_end = self.log.log_end_offset
        if leader_epoch < 0:
            target = self.high_watermark
        else:
            _, local_end = self.log.end_offset_for_epoch(leader_epoch)
            target = leader_end if local_end < 0 else min(leader_end, local_end)
        if target < log_end:
            log.info("%s: truncating from %d to %d to match the leader", self.key, log_end, target)
            self.log.truncate_to(target)
            if self.future_log is not None:
                self.future_log.truncate_to(target)

    def restart_at(self, leader_log_start: int) -> None:
        """Empty this replica, which fell behind the leader's log start, to start there."""
        log.info("%s: behind the leader's log start; restarting at %d", self.key, leader_log_start)
        self.log.truncate_fully_and_start_at(leader_log_start)
        if self.future_log is not None:
            self.future_log.truncate_fully_and_start_at(leader_log_start)

    def append_as_follower(self, records: bytes, leader_high_watermark: int) -> None:
        if records:
            self.log.append_as_follower(records)
        self.update_follower_high_watermark(leader_high_watermark)

    def update_follower_high_watermark(self, leader_high_watermark: int) -> None:
        new = min(leader_high_watermark, self.log.log_end_offset)
        if new > self.log.high_watermark:
            self.log.high_watermark = new
            self._notify()

    # --- reads and waiting -----------------------------------------------------------------

    def find_offset(self, timestamp: int, read_committed: bool = False) -> FoundOffset:
        """ListOffsets as leader: the offset for a timestamp or one of Kafka's special values,
        below the last stable offset for a read_committed reader (else the high watermark).

        Without tiered storage the earliest local offset is the earliest, and the tiered
        lookups find nothing, as on a Kafka broker without remote storage.
        """
        log = self.log
        fetchable = log.last_stable_offset if read_committed else self.high_watermark
        if timestamp == LATEST_TIMESTAMP:
            self._check_high_watermark_caught_up()
            return FoundOffset(-1, fetchable, self.state.leader_epoch)
        if timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            start = log.log_start_offset
            return FoundOffset(-1, start, log.epoch_for_offset(start))
        if timestamp == MAX_TIMESTAMP:
            found, offset = log.max_timestamp()
        elif timestamp >= 0:
            offset, found = log.offset_for_timestamp(timestamp) or (-1, -1)
        else:
            return NOT_FOUND
        if not 0 <= offset < fetchable:
            self._check_high_watermark_caught_up()
            return NOT_FOUND
        return FoundOffset(found, offset, log.epoch_for_offset(offset))

    def _check_high_watermark_caught_up(self) -> None:
        """A new leader learns the high watermark from its followers' next fetches; until
        it reaches the log end at election, answers past it would go back in time, so Kafka
        refuses them with the retriable OFFSET_NOT_AVAILABLE."""
        if self._epoch_start_offset > self.high_watermark:
            raise KafkaError(
                ErrorCode.offset_not_available,
                f"{self.key}: the high watermark {self.high_watermark} lags the start of leader "
                f"epoch {self.state.leader_epoch} at {self._epoch_start_offset}",
            )

    def active_producers(self) -> Mapping[int, ProducerEntry]:
        """DescribeProducers as leader: the producers whose state this partition keeps."""
        self.check_leader()
        return self.log.producers

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """OffsetForLeaderEpoch: (largest epoch <= ``epoch``, its end offset), or (-1, -1)."""
        return self.log.end_offset_for_epoch(epoch)

    def delete_records_before(self, offset: int) -> int:
        """DeleteRecords as leader: ``offset`` (-1: the high watermark) becomes the log start;
        returns the new log start offset (the low watermark)."""
        self.log.advance_log_start_offset(self.high_watermark if offset == -1 else offset)
        self._stir_quiet(grown=False)  # the fetchers resting here are told the new log start
        return self.log.log_start_offset

    @property
    def log_start_offset(self) -> int:
        return self.log.log_start_offset

    @property
    def size_bytes(self) -> int:
        """Bytes of this replica's segments."""
        return self.log.size_bytes

    @property
    def offset_lag(self) -> int:
        """How far this replica's log end is behind the high watermark it knows (Kafka's
        DescribeLogDirs offset lag: 0 on a leader)."""
        return max(self.high_watermark - self.log.log_end_offset, 0)

    def log_dirs(self) -> list[ReplicaInLogDir]:
        """Where this replica's log is, and its copy while it moves (DescribeLogDirs)."""
        held = [ReplicaInLogDir(self.log.directory.parent, self.size_bytes, self.offset_lag)]
        future = self.future_log
        if future is not None:
            lag = self.log.log_end_offset - future.log_end_offset
            held.append(ReplicaInLogDir(future.directory.parent, future.size_bytes, lag, True))
        return held

    # --- moving to another log directory (AlterReplicaLogDirs) ------------------------------

    def copy_to_future(self, max_bytes: int) -> tuple[int, bool]:
        """Append to ``future_log`` about ``max_bytes`` of the batches it lacks, as a follower
        appends them; (bytes copied, whether it now holds the whole log). Once it does, it
        also has the log's start, high watermark and latest leader epoch."""
        current, future = self.log, self.future_log
        assert future is not None, "no move in progress"
        start = current.log_start_offset
        if future.log_end_offset < start:
            future.truncate_fully_and_start_at(start)
        copied = 0
        if future.log_end_offset < current.log_end_offset:
            result = current.read(future.log_end_offset, max_bytes)
            data = b"".join(region.read() for region in result.regions)
            if data:
                future.append_as_follower(data)
            copied = len(data)
        future.high_watermark = current.high_watermark
        if future.log_start_offset < start:
            future.advance_log_start_offset(start)
        caught_up = future.log_end_offset == current.log_end_offset
        if caught_up and current.latest_epoch > future.latest_epoch:
            future.start_leader_epoch(current.latest_epoch)
        return copied, caught_up

    def adopt_moved_log(self, moved: PartitionLog) -> None:
        """Serve from ``moved``, the caught-up copy now in its new log directory."""
        self.log, self.future_log = moved, None
        self._notify()

    def read(
        self,
        fetch_offset: int,
        max_bytes: int,
        committed_only: bool,
        min_one_batch: bool = True,
        read_committed: bool = False,
    ) -> ReadResult:
        """Whole batches from ``fetch_offset``: up to the high watermark for consumers
        (``committed_only``), the last stable offset for read_committed ones, to the log end
        for followers; see PartitionLog.read."""
        limit = None
        if committed_only:
            limit = self.log.last_stable_offset if read_committed else self.log.high_watermark
        return self.log.read(fetch_offset, max_bytes, max_offset=limit, min_one_batch=min_one_batch)

    @property
    def last_stable_offset(self) -> int:
        return self.log.last_stable_offset

    def fetch_stamp(self, read_committed: bool) -> tuple[object, ...]:
        """Everything a fetch of this replica is answered from but its own position: while
        the stamp stands, a fetch at the same position finds what the last one found (fetch
        sessions skip a partition whose last answer left nothing to send)."""
        log = self.log
        return (
            log,
            self.state,
            self.fenced,
            log.offline,
            log.log_end_offset,
            log.high_watermark,
            log.log_start_offset,
            log.last_stable_offset if read_committed else -1,
        )

    def aborted_transactions(self, fetch_offset: int, next_offset: int) -> list[AbortedTxn]:
        """The aborted transactions a read_committed consumer needs for the batches it was
        sent, from ``fetch_offset`` up to ``next_offset``."""
        return self.log.aborted_transactions(fetch_offset, next_offset)

    def wait_for_change(self) -> asyncio.Future[None]:
        """A future resolved at the next append, high watermark or state change; shared by
        all waiters, so wait on it with ``asyncio.wait`` or ``asyncio.shield``, never
        cancel it."""
        if self._changed is None:
            self._changed = asyncio.get_running_loop().create_future()
        return self._changed

    def wait_for_growth(self) -> asyncio.Future[None]:
        """Like ``wait_for_change``, but a high watermark that moves alone does not resolve
        it: what a follower's fetch waits for, as in Kafka, where only new bytes complete
        a follower's delayed fetch (else every follower's fetch woke for each high
        watermark another follower's fetch moved, read everything again and found
        nothing)."""
        if self._grown is None:
            self._grown = asyncio.get_running_loop().create_future()
        return self._grown

    def watch_quiet(self, reader: QuietReader) -> None:
        """Tell ``reader`` once, at the next change a fetch would see (what ``_notify``
        reports, a fence, a new log start): a fetch session rests its partitions that had
        nothing to send here instead of reading them again at every fetch."""
        self._quiet_readers.add(reader)

    def unwatch_quiet(self, reader: QuietReader) -> None:
        self._quiet_readers.discard(reader)

    def _maybe_advance_high_watermark(self) -> None:
        if self.state.leader != self._node_id:
            return
        ends = [self.log.log_end_offset]
        for replica in itertools.chain(self.state.isr, self._joining):  # no set per call
            if replica != self._node_id:
                progress = self._followers.get(replica)
                ends.append(progress.log_end_offset if progress else -1)
        candidate = min(ends)
        if candidate > self.log.high_watermark:
            self.log.high_watermark = candidate
            self._notify(grown=False)

    def _notify(self, grown: bool = True) -> None:
        """Wake the waiters for any change, and unless only the high watermark moved
        (``grown`` False), those for growth."""
        if self._changed is not None:
            self._changed.set_result(None)
            self._changed = None
        if grown and self._grown is not None:
            self._grown.set_result(None)
            self._grown = None
        self._stir_quiet(grown)

    def _stir_quiet(self, grown: bool) -> None:
        if self._quiet_readers:
            readers, self._quiet_readers = self._quiet_readers, set()
            for reader in readers:
                reader.stirred(grown)
