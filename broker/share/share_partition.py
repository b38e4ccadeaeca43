"""One share-partition: which records of a topic partition a share group has handed out,
to whom, how often, and which are done with (Kafka's SharePartition).

Offsets below ``start_offset`` are done with; ``end_offset`` is the next offset never
delivered. Each offset between them is in flight: AVAILABLE (to be offered again),
ACQUIRED by a member until its lock's deadline, ACKNOWLEDGED or ARCHIVED. A record goes
back to AVAILABLE when released or when its lock expires, unless it has been delivered
``delivery_count_limit`` times: then it is ARCHIVED, never offered again. The start offset
moves past every done record at the front. The state machine knows no clock or log: the
caller passes deadlines, the current time and the log's batches.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import IntEnum

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.share.share_state import DeliveryState, ShareState, StateBatch

_DONE = (DeliveryState.ACKNOWLEDGED, DeliveryState.ARCHIVED)


class AcknowledgeType(IntEnum):
    GAP = 0  # an offset with no record (compacted away, a transaction marker)
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4  # ShareFetch/ShareAcknowledge v2 (KIP-1222): keep the lock longer


@dataclass
class _InFlight:
    state: DeliveryState
    delivery_count: int
    member_id: str = ""
    deadline: float = 0.0


@dataclass(frozen=True)
class AcquiredRange:
    first_offset: int
    last_offset: int
    delivery_count: int


@dataclass(frozen=True)
class LogBatch:
    """A batch of the partition's log as acquisition needs it."""

    base_offset: int
    last_offset: int
    deliverable: bool = True
    """False for a transaction marker, and for an aborted transaction's batch when the
    group reads committed records only: its offsets are archived, never handed out."""


class SharePartition:
    def __init__(self, state: ShareState, delivery_count_limit: int, max_record_locks: int):
        self.start_offset = state.start_offset
        self.state_epoch = state.state_epoch
        self.delivery_count_limit = delivery_count_limit
        self.max_record_locks = max_record_locks
        self._records: dict[int, _InFlight] = {}
        self.end_offset = self.start_offset
        for batch in state.batches:
            for offset in range(max(batch.first_offset, self.start_offset), batch.last_offset + 1):
                self._records[offset] = _InFlight(batch.delivery_state, batch.delivery_count)
            self.end_offset = max(self.end_offset, batch.last_offset + 1)
        for offset in range(self.start_offset, self.end_offset):  # never written: undelivered
            self._records.setdefault(offset, _InFlight(DeliveryState.AVAILABLE, 0))
        self._records = dict(sorted(self._records.items()))
        self._advance_start()

    # --- what there is ---------------------------------------------------------------------

    @property
    def in_flight(self) -> int:
        return len(self._records)

    def count(self, state: DeliveryState) -> int:
        return sum(1 for record in self._records.values() if record.state is state)

    def next_deadline(self) -> float | None:
        deadlines = [
            record.deadline
            for record in self._records.values()
            if record.state is DeliveryState.ACQUIRED
        ]
        return min(deadlines, default=None)

    def has_available(self) -> bool:
        return any(record.state is DeliveryState.AVAILABLE for record in self._records.values())

    def wants_new_records(self) -> bool:
        return self.in_flight < self.max_record_locks

    def state(self, leader_epoch: int) -> ShareState:
        """What is persisted: the start offset and the in-flight records as batches (an
        acquired record is stored as AVAILABLE with its delivery count)."""
        batches: list[StateBatch] = []
        for offset, record in self._records.items():
            state = record.state
            if state is DeliveryState.ACQUIRED:
                state = DeliveryState.AVAILABLE
            last = batches[-1] if batches else None
            if (
                last is not None
                and last.last_offset == offset - 1
                and last.delivery_state is state
                and last.delivery_count == record.delivery_count
            ):
                batches[-1] = StateBatch(last.first_offset, offset, state, record.delivery_count)
            else:
                batches.append(StateBatch(offset, offset, state, record.delivery_count))
        return ShareState(self.start_offset, self.state_epoch, leader_epoch, tuple(batches))

    # --- handing records out ---------------------------------------------------------------

    def acquire_available(
        self, member_id: str, max_records: int, deadline: float
    ) -> list[AcquiredRange]:
        """Offer again, in offset order, up to ``max_records`` records that are AVAILABLE."""
        acquired: list[tuple[int, int]] = []
        for offset, record in self._records.items():
            if len(acquired) >= max_records:
                break
            if record.state is DeliveryState.AVAILABLE:
                self._acquire(record, member_id, deadline)
                acquired.append((offset, record.delivery_count))
        return _ranges(acquired)

    def acquire_new(
        self,
        member_id: str,
        batches: Sequence[LogBatch],
        max_records: int,
        deadline: float,
        exact: bool = False,
    ) -> list[AcquiredRange]:
        """Hand out records never delivered, from the log's ``batches`` read at the end
        offset: whole batches until ``max_records`` is reached, or exactly ``max_records``
        (``exact``, ShareFetch's record-limit mode). Batches not deliverable are archived."""
        acquired: list[tuple[int, int]] = []
        for batch in batches:
            first = max(batch.base_offset, self.end_offset)
            if first > batch.last_offset:
                continue
            if not batch.deliverable:
                for offset in range(first, batch.last_offset + 1):
                    self._records[offset] = _InFlight(DeliveryState.ARCHIVED, 0)
                self.end_offset = batch.last_offset + 1
                continue
            room = max_records - len(acquired)
            if room <= 0 or not self.wants_new_records():
                break
            last = min(batch.last_offset, first + room - 1) if exact else batch.last_offset
            for offset in range(first, last + 1):
                record = self._records[offset] = _InFlight(DeliveryState.AVAILABLE, 0)
                self._acquire(record, member_id, deadline)
                acquired.append((offset, 1))
            self.end_offset = last + 1
        self._advance_start()
        return _ranges(acquired)

    def _acquire(self, record: _InFlight, member_id: str, deadline: float) -> None:
        record.state = DeliveryState.ACQUIRED
        record.delivery_count += 1
        record.member_id = member_id
        record.deadline = deadline

    # --- records coming back ---------------------------------------------------------------

    def acknowledge(
        self,
        member_id: str,
        first_offset: int,
        last_offset: int,
        types: Sequence[int],
        renewed_deadline: float,
    ) -> None:
        """Apply one acknowledgement batch (one type for all its offsets, or one each);
        INVALID_RECORD_STATE, with nothing applied, unless every offset is acquired by
        ``member_id``."""
        count = last_offset - first_offset + 1
        if count < 1 or len(types) not in (1, count):
            raise KafkaError(
                ErrorCode.invalid_request,
                f"acknowledgement of offsets {first_offset}-{last_offset} has {len(types)} types",
            )
        try:
            kinds = [AcknowledgeType(kind) for kind in types]
        except ValueError:
            raise KafkaError(
                ErrorCode.invalid_request, f"unknown acknowledge type in {list(types)}"
            ) from None
        for offset in range(first_offset, last_offset + 1):
            record = self._records.get(offset)
            if (
                record is None
                or record.state is not DeliveryState.ACQUIRED
                or record.member_id != member_id
            ):
                raise KafkaError(
                    ErrorCode.invalid_record_state,
                    f"offset {offset} is not acquired by member {member_id}",
                )
        for index, offset in enumerate(range(first_offset, last_offset + 1)):
            record = self._records[offset]
            kind = kinds[0] if len(kinds) == 1 else kinds[index]
            if kind is AcknowledgeType.ACCEPT:
                record.state = DeliveryState.ACKNOWLEDGED
            elif kind is AcknowledgeType.RELEASE:
                self._release(record)
            elif kind is AcknowledgeType.RENEW:
                record.deadline = renewed_deadline
            else:  # REJECT, GAP
                record.state = DeliveryState.ARCHIVED
        self._advance_start()

    def release_expired(self, now: float) -> int:
        """Release the records whose lock has expired; how many there were."""
        return self._release_where(
            lambda record: record.state is DeliveryState.ACQUIRED and record.deadline <= now
        )

    def release_member(self, member_id: str) -> int:
        """Release every record ``member_id`` holds (its share session ended)."""
        return self._release_where(
            lambda record: record.state is DeliveryState.ACQUIRED and record.member_id == member_id
        )

    def move_start_to(self, log_start_offset: int) -> bool:
        """Drop what the log no longer has (retention, DeleteRecords)."""
        if log_start_offset <= self.start_offset:
            return False
        for offset in [o for o in self._records if o < log_start_offset]:
            del self._records[offset]
        self.start_offset = log_start_offset
        self.end_offset = max(self.end_offset, log_start_offset)
        self._advance_start()
        return True

    def _release_where(self, matches: Callable[[_InFlight], bool]) -> int:
        released = [record for record in self._records.values() if matches(record)]
        for record in released:
            self._release(record)
        self._advance_start()
        return len(released)

    def _release(self, record: _InFlight) -> None:
        record.member_id, record.deadline = "", 0.0
        if record.delivery_count >= self.delivery_count_limit:
            record.state = DeliveryState.ARCHIVED
        else:
            record.state = DeliveryState.AVAILABLE

    def _advance_start(self) -> None:
        while self.start_offset < self.end_offset:
            record = self._records.get(self.start_offset)
            if record is not None and record.state not in _DONE:
                return
            self._records.pop(self.start_offset, None)
            self.start_offset += 1


def _ranges(acquired: Iterable[tuple[int, int]]) -> list[AcquiredRange]:
    """Consecutive offsets with the same delivery count as one range."""
    ranges: list[AcquiredRange] = []
    for offset, count in acquired:
        last = ranges[-1] if ranges else None
        if last is not None and last.last_offset == offset - 1 and last.delivery_count == count:
            ranges[-1] = AcquiredRange(last.first_offset, offset, count)
        else:
            ranges.append(AcquiredRange(offset, offset, count))
    return ranges
