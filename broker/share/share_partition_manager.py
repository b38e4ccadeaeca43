"""The share-partitions this broker serves: those of the topic partitions it leads.

A share-partition is loaded from its share coordinator on the first ShareFetch that
needs it (a share-partition with no state yet starts at the group's
``share.auto.offset.reset``, and that start is written at once). Acquisition hands out
records with a lock that expires after the group's record lock duration; acknowledgements,
releases and expiries are written to the share coordinator, and an acknowledgement is
answered only once its write is replicated. When this broker stops leading the partition
its share-partitions are dropped: the new leader loads what was written, so records
acquired but not yet acknowledged are offered again there. A write that fails (a newer
leader fenced this one) drops the share-partition too, for the same reason.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

from odradek.broker.cluster.background_tasks import BackgroundTasks
from odradek.broker.cluster.partition import Partition, PartitionKey
from odradek.broker.cluster.replica_manager import ReplicaManager
from odradek.broker.config.share_auto_offset_reset import ResetStrategy, ShareAutoOffsetReset
from odradek.broker.protocol.records import BatchHeader, iter_batches
from odradek.broker.share.share_config import ShareConfig
from odradek.broker.share.share_partition import AcquiredRange, LogBatch, SharePartition
from odradek.broker.share.share_persister import SharePersister
from odradek.broker.share.share_state import DeliveryState, SharePartitionKey, ShareState

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ShareGroupSettings:
    """What a share group's configs (or the broker's defaults) decide here."""

    auto_offset_reset: ShareAutoOffsetReset
    record_lock_duration_ms: int
    delivery_count_limit: int
    partition_max_record_locks: int
    read_committed: bool = False


@dataclass(frozen=True)
class Acknowledgement:
    first_offset: int
    last_offset: int
    types: tuple[int, ...]


@dataclass(frozen=True)
class Acquired:
    records: bytes
    ranges: list[AcquiredRange]

    @property
    def record_count(self) -> int:
        return sum(_size(r) for r in self.ranges)


@dataclass
class _Hosted:
    share: SharePartition
    partition: Partition
    leader_epoch: int
    settings: ShareGroupSettings
    write_lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    released: asyncio.Future[None] | None = None

    def wait_for_release(self) -> asyncio.Future[None]:
        if self.released is None:
            self.released = asyncio.get_running_loop().create_future()
        return self.released

    def notify_released(self) -> None:
        if self.released is not None:
            self.released.set_result(None)
            self.released = None


class SharePartitionManager:
    def __init__(
        self,
        config: ShareConfig,
        replicas: ReplicaManager,
        persister: SharePersister,
        settings: Callable[[str], ShareGroupSettings],
    ) -> None:
        self.config = config
        self._replicas = replicas
        self._persister = persister
        self._settings = settings
        self._hosted: dict[SharePartitionKey, _Hosted] = {}
        self._loading: dict[SharePartitionKey, asyncio.Future[_Hosted]] = {}
        self._tasks = BackgroundTasks()
        self.redelivered = 0
        """Records handed out again (delivery count above 1), since start."""

    def start(self) -> None:
        self._replicas.on_role_change(self._on_role_change)

    async def stop(self) -> None:
        await self._tasks.cancel_all()
        self._hosted.clear()

    def hosted(self) -> list[tuple[SharePartitionKey, str, SharePartition]]:
        """The share-partitions served now, with their topic names."""
        return [(key, h.partition.key.topic, h.share) for key, h in self._hosted.items()]

    # --- the APIs ----------------------------------------------------------------------------

    async def acquire(
        self,
        key: SharePartitionKey,
        topic: str,
        member_id: str,
        max_records: int,
        max_bytes: int,
        exact: bool,
    ) -> Acquired:
        """Records for ``member_id``: first those to be offered again, then new ones."""
        hosted = await self._host(key, topic)
        share, partition = hosted.share, hosted.partition
        if share.move_start_to(partition.log_start_offset):
            self._persist_in_background(key, hosted)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + hosted.settings.record_lock_duration_ms / 1000
        ranges = share.acquire_available(member_id, max_records, deadline)
        chunks = [_bytes_of(partition, ranges, max_bytes)] if ranges else []
        self.redelivered += sum(_size(r) for r in ranges if r.delivery_count > 1)
        room = max_records - sum(_size(r) for r in ranges)
        if room > 0 and share.wants_new_records() and share.end_offset < partition.high_watermark:
            result = partition.read(
                share.end_offset,
                max_bytes,
                committed_only=True,
                read_committed=hosted.settings.read_committed,
            )
            data = b"".join(region.read() for region in result.regions)
            batches = {
                h: LogBatch(h.base_offset, h.last_offset, not h.is_control)
                for h in iter_batches(data)
            }
            if hosted.settings.read_committed and batches:
                _skip_aborted(partition, batches, share.end_offset, result.next_offset)
            fresh = share.acquire_new(member_id, list(batches.values()), room, deadline, exact)
            if fresh:
                first, last = fresh[0].first_offset, fresh[-1].last_offset
                chunks.extend(
                    data[h.position : h.position + h.size]
                    for h, batch in batches.items()
                    if batch.deliverable and h.base_offset <= last and h.last_offset >= first
                )
                ranges += fresh
        if ranges:
            loop.call_at(deadline, self._expire, key, hosted)
        return Acquired(b"".join(chunks), ranges)

    async def acknowledge(
        self, key: SharePartitionKey, topic: str, member_id: str, batches: Iterable[Acknowledgement]
    ) -> None:
        """Apply the member's acknowledgements and write the state; KafkaError if any batch
        is refused (INVALID_RECORD_STATE) or the write fails."""
        hosted = await self._host(key, topic)
        renewed = asyncio.get_running_loop().time() + hosted.settings.record_lock_duration_ms / 1000
        released = hosted.share.count(DeliveryState.AVAILABLE)
        for batch in batches:
            hosted.share.acknowledge(
                member_id, batch.first_offset, batch.last_offset, batch.types, renewed
            )
        if hosted.share.count(DeliveryState.AVAILABLE) != released:
            hosted.notify_released()
        await self._persist(key, hosted)

    def release(self, member_id: str, keys: Iterable[SharePartitionKey]) -> None:
        """The member's share session ended: what it holds is offered to others."""
        for key in keys:
            hosted = self._hosted.get(key)
            if hosted is not None and hosted.share.release_member(member_id):
                hosted.notify_released()
                self._persist_in_background(key, hosted)

    def unload_idle(self, keys: Iterable[SharePartitionKey]) -> None:
        """Forget these share-partitions once their pending writes are done, unless records
        are acquired again meanwhile: no session uses them any more, and an admin may now
        start them afresh (AlterShareGroupOffsets) at the share coordinator."""

        async def unload(key: SharePartitionKey, hosted: _Hosted) -> None:
            async with hosted.write_lock:
                idle = not hosted.share.count(DeliveryState.ACQUIRED)
                if idle and self._hosted.get(key) is hosted:
                    self._drop(key)

        for key in keys:
            hosted = self._hosted.get(key)
            if hosted is not None:
                self._tasks.spawn(unload(key, hosted))

    def change_waiters(
        self, keys: Iterable[tuple[SharePartitionKey, str]]
    ) -> list[asyncio.Future[None]]:
        """Futures that resolve when any of these share-partitions may have records to
        hand out: an append or high watermark change, or records released."""
        waiters = []
        for key, topic in keys:
            partition = self._replicas.find(PartitionKey(topic, key.partition))
            if partition is not None:
                waiters.append(partition.wait_for_change())
            hosted = self._hosted.get(key)
            if hosted is not None:
                waiters.append(hosted.wait_for_release())
        return waiters

    # --- hosting -----------------------------------------------------------------------------

    async def _host(self, key: SharePartitionKey, topic: str) -> _Hosted:
        partition = self._replicas.get(topic, key.partition)
        partition.check_leader()
        hosted = self._hosted.get(key)
        if hosted is not None:
            return hosted
        loading = self._loading.get(key)
        if loading is None:
            loading = self._loading[key] = asyncio.ensure_future(self._load(key, partition))
            loading.add_done_callback(lambda _: self._loading.pop(key, None))
        return await asyncio.shield(loading)

    async def _load(self, key: SharePartitionKey, partition: Partition) -> _Hosted:
        settings = self._settings(key.group_id)
        leader_epoch = partition.state.leader_epoch
        state = await self._persister.read(key, leader_epoch)
        if state is None:
            start = _start_offset(partition, settings)
            state = ShareState(start, 0, leader_epoch)
            await self._persister.write(key, state)
            log.info("share group %s starts %s at offset %d", key.group_id, partition.key, start)
        share = SharePartition(
            state, settings.delivery_count_limit, settings.partition_max_record_locks
        )
        hosted = _Hosted(share, partition, leader_epoch, settings)
        partition.check_leader()  # leadership may have moved while reading
        self._hosted[key] = hosted
        return hosted

    def _on_role_change(self, partition: Partition) -> None:
        if partition.is_leader:
            return
        for key in [k for k, h in self._hosted.items() if h.partition is partition]:
            self._drop(key)

    def _drop(self, key: SharePartitionKey) -> None:
        hosted = self._hosted.pop(key, None)
        if hosted is not None:
            hosted.notify_released()

    # --- locks expiring and writes -------------------------------------------------------

    def _expire(self, key: SharePartitionKey, hosted: _Hosted) -> None:
        if self._hosted.get(key) is not hosted:
            return
        if hosted.share.release_expired(asyncio.get_running_loop().time()):
            hosted.notify_released()
            self._persist_in_background(key, hosted)

    def _persist_in_background(self, key: SharePartitionKey, hosted: _Hosted) -> None:
        async def persist() -> None:
            try:
                await self._persist(key, hosted)
            except Exception as error:  # the share-partition was dropped; reload on next use
                log.warning(
                    "cannot write the state of share group %s %s: %s",
                    key.group_id,
                    hosted.partition.key,
                    error,
                )

        self._tasks.spawn(persist())

    async def _persist(self, key: SharePartitionKey, hosted: _Hosted) -> None:
        async with hosted.write_lock:
            if self._hosted.get(key) is not hosted:
                return
            try:
                await self._persister.write(key, hosted.share.state(hosted.leader_epoch))
            except Exception:
                self._drop(key)
                raise


def _start_offset(partition: Partition, settings: ShareGroupSettings) -> int:
    """Where a share group with no state starts reading (``share.auto.offset.reset``):
    the log start, the high watermark, or the first record written at or after now minus
    the duration (the high watermark if there is none)."""
    reset = settings.auto_offset_reset
    if reset.strategy is ResetStrategy.EARLIEST:
        return partition.log_start_offset
    if reset.strategy is ResetStrategy.BY_DURATION:
        found = partition.find_offset(int(time.time() * 1000) - reset.duration_ms)
        if found.offset >= 0:
            return found.offset
    return partition.high_watermark


def _skip_aborted(
    partition: Partition, batches: dict[BatchHeader, LogBatch], start: int, end: int
) -> None:
    """Mark the batches of aborted transactions as not deliverable (read_committed)."""
    aborted = partition.aborted_transactions(start, end)
    for header, batch in batches.items():
        if header.is_transactional and any(
            txn.producer_id == header.producer_id
            and txn.first_offset <= header.base_offset <= txn.last_offset
            for txn in aborted
        ):
            batches[header] = LogBatch(batch.base_offset, batch.last_offset, deliverable=False)


def _size(acquired: AcquiredRange) -> int:
    return acquired.last_offset - acquired.first_offset + 1


def _bytes_of(partition: Partition, ranges: Sequence[AcquiredRange], max_bytes: int) -> bytes:
    """The log's batches holding the offsets of ``ranges``, each batch once."""
    chunks: list[bytes] = []
    seen: set[int] = set()
    for wanted in ranges:
        offset = wanted.first_offset
        while offset <= wanted.last_offset:
            result = partition.read(offset, max_bytes, committed_only=True)
            data = b"".join(region.read() for region in result.regions)
            headers = [
                h
                for h in iter_batches(data)
                if h.last_offset >= offset and h.base_offset <= wanted.last_offset
            ]
            if not headers:
                break  # the rest of the range is gone from the log (compacted, deleted)
            for header in headers:
                if header.base_offset not in seen:
                    seen.add(header.base_offset)
                    chunks.append(data[header.position : header.position + header.size])
            offset = headers[-1].next_offset
    return b"".join(chunks)
