"""The groups this broker coordinates: those of the ``__consumer_offsets`` partitions it
leads (``CoordinatorPartitions``), loaded from their records."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence

from odradek.broker.cluster.coordinator_log import KeyValue, read_records
from odradek.broker.cluster.coordinator_partitions import CoordinatorPartitions
from odradek.broker.cluster.metadata_store import MetadataStore
from odradek.broker.cluster.partition import Partition
from odradek.broker.cluster.replica_manager import ReplicaManager
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
from odradek.broker.protocol.record_fields import RecordFormatError

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

    def _load(self, partition: Partition) -> Callable[[], None]:
        groups = replay(read_records(partition))

        def install() -> None:
            for group in groups:
                self.groups[group.group_id] = group
                self._on_loaded(group)
            if groups:
                log.info("loaded %d groups from %s", len(groups), partition.key)

        return install

    def _unload(self, index: int) -> None:
        for group_id in [g for g in self.groups if self.partitions.partition_of(g) == index]:
            group = self.groups.pop(group_id)
            group.state = GroupState.DEAD
            self._on_unloaded(group)

    async def write(self, group_id: str, records: Sequence[KeyValue]) -> None:
        """Append records for ``group_id`` to its partition; errors as group clients expect."""
        await self.partitions.write(group_id, records)

    async def persist_group(self, group: Group) -> None:
        key = encode_key(GroupKey(group.group_id))
        await self.write(group.group_id, [(key, encode_group(group.stored()))])


def replay(records: Iterable[KeyValue]) -> list[Group]:
    """The groups described by a partition's records, applied in log order."""
    stored: dict[str, StoredGroup | None] = {}
    offsets: dict[str, dict[tuple[str, int], CommittedOffset]] = {}
    for raw_key, raw_value in records:
        try:
            key = decode_key(raw_key)
            if isinstance(key, OffsetKey):
                committed = offsets.setdefault(key.group_id, {})
                if raw_value is None:
                    committed.pop((key.topic, key.partition), None)
                else:
                    committed[(key.topic, key.partition)] = decode_offset(raw_value)
            else:
                stored[key.group_id] = decode_group(raw_value) if raw_value is not None else None
        except RecordFormatError as error:
            log.error("skipping an unreadable %s record: %s", OFFSETS_TOPIC, error)
    groups = []
    for group_id in stored.keys() | offsets.keys():
        metadata = stored.get(group_id)
        committed = offsets.get(group_id, {})
        if metadata is None and not committed:
            continue  # deleted
        group = Group.restored(group_id, metadata) if metadata else Group(group_id)
        group.offsets = committed
        groups.append(group)
    return groups
