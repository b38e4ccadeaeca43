"""The groups this broker coordinates: those of the ``__consumer_offsets`` partitions it
leads (``CoordinatorPartitions``), loaded from their records."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from odradek.broker.cluster.coordinator_log import KeyValue, LoggedItem
from odradek.broker.cluster.coordinator_partitions import CoordinatorPartitions
from odradek.broker.cluster.metadata_store import MetadataStore
from odradek.broker.cluster.partition import PartitionKey
from odradek.broker.cluster.replica_manager import ReplicaManager
from odradek.broker.group.consumer_group_records import ConsumerGroupKey, replayed_groups
from odradek.broker.group.group import Group
from odradek.broker.group.group_partition import OFFSETS_TOPIC, partition_for_group
from odradek.broker.group.group_state import GroupState
from odradek.broker.group.record_format import (
    CommittedOffset,
    GroupKey,
    OffsetKey,
    RecordKey,
    decode_group,
    decode_key,
    decode_offset,
    encode_group,
    encode_key,
)
from odradek.broker.group.share_group_records import ShareGroupKey, replayed_share_groups
from odradek.broker.protocol.record_fields import RecordFormatError
from odradek.broker.protocol.records import NO_PRODUCER_ID
from odradek.broker.protocol.transaction_markers import TransactionMarker

log = logging.getLogger(__name__)
GroupHook = Callable[[Group], None]


class GroupCatalog:
    def __init__(
        self,
        store: MetadataStore,
        replicas: ReplicaManager,
        min_insync: Callable[[], int],
        write_timeout_ms: int,
        on_loaded: GroupHook,
        on_unloaded: GroupHook,
    ) -> None:
        self._on_loaded = on_loaded
        self._on_unloaded = on_unloaded
        self.partitions = CoordinatorPartitions(
            OFFSETS_TOPIC,
            store,
            replicas,
            partition_for_group,
            self._load,
            self._unload,
            min_insync,
            write_timeout_ms,
        )
        self.groups: dict[str, Group] = {}

    def start(self) -> None:
        self.partitions.start()

    async def close(self) -> None:
        await self.partitions.close()

    def check_owned(self, group_id: str) -> None:
        self.partitions.check_owned(group_id)

    @property
    def loading(self) -> bool:
        return self.partitions.loading

    def _load(self, key: PartitionKey, logged: Iterable[LoggedItem]) -> Callable[[], None]:
        groups = replay(logged)

        def install() -> None:
            for group in groups:
                self.groups[group.group_id] = group
                self._on_loaded(group)
            if groups:
                log.info("loaded %d groups from %s", len(groups), key)

        return install

    def _unload(self, index: int) -> None:
        for group_id in [g for g in self.groups if self.partitions.partition_of(g) == index]:
            group = self.groups.pop(group_id)
            group.state = GroupState.DEAD
            self._on_unloaded(group)

    async def write(
        self,
        group_id: str,
        records: Sequence[KeyValue],
        transaction: tuple[int, int] | None = None,
    ) -> None:
        """Append records for ``group_id`` to its partition (in a producer's transaction, if
        given); errors as group clients expect."""
        await self.partitions.write(group_id, records, transaction)

    async def persist_group(self, group: Group) -> None:
        key = encode_key(GroupKey(group.group_id))
        await self.write(group.group_id, [(key, encode_group(group.stored()))])


def replay(logged: Iterable[LoggedItem]) -> list[Group]:
    """The groups described by a partition's records, applied in log order; a transaction's
    offsets (TxnOffsetCommit) count once its COMMIT marker follows, are dropped at its ABORT
    marker, and stay pending while neither has come.

    A member commits the same few keys over and over: each distinct key is decoded once,
    and an offset or group value only once it is known to be the last word on its key."""
    keys = _KeyCache()
    stored: dict[str, bytes | None] = {}
    consumer_records: list[tuple[ConsumerGroupKey, bytes | None]] = []
    share_records: list[tuple[ShareGroupKey, bytes | None]] = []
    offsets: dict[str, dict[tuple[str, int], bytes | None]] = {}
    pending: dict[int, list[_PendingOffset]] = {}
    for item in logged:
        if isinstance(item, TransactionMarker):
            for group_id, where, value in pending.pop(item.producer_id, []):
                if item.commits:
                    offsets.setdefault(group_id, {})[where] = value
            continue
        try:
            record_key = keys.decoded(item.key)
        except RecordFormatError as error:
            log.error("skipping an unreadable %s record: %s", OFFSETS_TOPIC, error)
            continue
        if isinstance(record_key, OffsetKey):
            where = (record_key.topic, record_key.partition)
            if item.producer_id != NO_PRODUCER_ID:
                entry = (record_key.group_id, where, item.value)
                pending.setdefault(item.producer_id, []).append(entry)
            else:
                offsets.setdefault(record_key.group_id, {})[where] = item.value
        elif isinstance(record_key, ConsumerGroupKey):
            consumer_records.append((record_key, item.value))
        elif isinstance(record_key, ShareGroupKey):
            share_records.append((record_key, item.value))
        else:
            stored[record_key.group_id] = item.value
    consumer_groups = {
        group_id: group
        for group_id, group in replayed_groups(consumer_records).items()
        if group is not None
    }
    share_groups = {
        group_id: group
        for group_id, group in replayed_share_groups(share_records).items()
        if group is not None
    }
    groups = []
    for group_id in (
        stored.keys()
        | offsets.keys()
        | _pending_groups(pending)
        | consumer_groups.keys()
        | share_groups.keys()
    ):
        metadata = _readable(decode_group, stored.get(group_id))
        committed = _readable_offsets(offsets.get(group_id, {}).items())
        open_offsets = {
            producer_id: _readable_offsets((k, v) for g, k, v in entries if g == group_id)
            for producer_id, entries in pending.items()
        }
        open_offsets = {producer_id: o for producer_id, o in open_offsets.items() if o}
        consumer, share = consumer_groups.get(group_id), share_groups.get(group_id)
        modern = consumer is not None or share is not None
        if metadata is None and not committed and not open_offsets and not modern:
            continue  # deleted
        group = Group.restored(group_id, metadata) if metadata and not modern else Group(group_id)
        group.consumer, group.share = consumer, share
        group.offsets = committed
        group.transactional_offsets = open_offsets
        groups.append(group)
    return groups


_PendingOffset = tuple[str, tuple[str, int], bytes | None]  # group, (topic, partition), value
_Value = TypeVar("_Value")


class _KeyCache:
    """Record keys decoded once per distinct key bytes."""

    def __init__(self) -> None:
        self._keys: dict[bytes, RecordKey] = {}

    def decoded(self, data: bytes) -> RecordKey:
        key = self._keys.get(data)
        if key is None:
            key = self._keys[data] = decode_key(data)
        return key


def _readable(decode: Callable[[bytes], _Value], data: bytes | None) -> _Value | None:
    """``data`` decoded; None for a tombstone, or (logged) for a value that does not decode."""
    if data is None:
        return None
    try:
        return decode(data)
    except RecordFormatError as error:
        log.error("skipping an unreadable %s record: %s", OFFSETS_TOPIC, error)
        return None


def _readable_offsets(
    entries: Iterable[tuple[tuple[str, int], bytes | None]],
) -> dict[tuple[str, int], CommittedOffset]:
    """The committed offsets among ``entries``, tombstones and unreadable values left out."""
    decoded = {where: _readable(decode_offset, value) for where, value in entries}
    return {where: value for where, value in decoded.items() if value is not None}


def _pending_groups(pending: dict[int, list[_PendingOffset]]) -> set[str]:
    return {group_id for entries in pending.values() for group_id, _, _ in entries}
