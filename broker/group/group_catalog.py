"""The groups this broker coordinates: those of the ``__consumer_offsets`` partitions it
leads (``CoordinatorPartitions``), loaded from their records."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence

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
    StoredGroup,
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
    marker, and stay pending while neither has come."""
    stored: dict[str, StoredGroup | None] = {}
    consumer_records: list[tuple[ConsumerGroupKey, bytes | None]] = []
    share_records: list[tuple[ShareGroupKey, bytes | None]] = []
    offsets: dict[str, dict[tuple[str, int], CommittedOffset | None]] = {}
    pending: dict[int, list[tuple[str, tuple[str, int], CommittedOffset | None]]] = {}
    for item in logged:
        if isinstance(item, TransactionMarker):
            for group_id, where, value in pending.pop(item.producer_id, []):
                if item.commits:
                    offsets.setdefault(group_id, {})[where] = value
            continue
        try:
            record_key = decode_key(item.key)
            if isinstance(record_key, OffsetKey):
                value = decode_offset(item.value) if item.value is not None else None
                where = (record_key.topic, record_key.partition)
                group_offsets = (record_key.group_id, where, value)
                if item.producer_id != NO_PRODUCER_ID:
                    pending.setdefault(item.producer_id, []).append(group_offsets)
                else:
                    offsets.setdefault(record_key.group_id, {})[where] = value
            elif isinstance(record_key, ConsumerGroupKey):
                consumer_records.append((record_key, item.value))
            elif isinstance(record_key, ShareGroupKey):
                share_records.append((record_key, item.value))
            else:
                stored[record_key.group_id] = (
                    decode_group(item.value) if item.value is not None else None
                )
        except RecordFormatError as error:
            log.error("skipping an unreadable %s record: %s", OFFSETS_TOPIC, error)
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
        metadata = stored.get(group_id)
        committed = {k: v for k, v in offsets.get(group_id, {}).items() if v is not None}
        open_offsets = {
            producer_id: {k: v for g, k, v in entries if g == group_id and v is not None}
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


def _pending_groups(
    pending: dict[int, list[tuple[str, tuple[str, int], CommittedOffset | None]]],
) -> set[str]:
    return {group_id for entries in pending.values() for group_id, _, _ in entries}
