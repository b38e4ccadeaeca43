"""The groups this broker coordinates: those of the ``__consumer_offsets`` partitions it leads.

Becoming leader of a partition loads its groups from the log (meanwhile their
requests get COORDINATOR_LOAD_IN_PROGRESS); losing leadership unloads them
(NOT_COORDINATOR, and the client finds the new coordinator). A single broker
becomes leader of every partition at startup; with replication, coordinator
failover is the same path on the new leader.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Sequence

from odradek.broker.cluster.metadata_store import MetadataStore
from odradek.broker.cluster.partition import Partition
from odradek.broker.cluster.replica_manager import ReplicaManager
from odradek.broker.group.group import Group
from odradek.broker.group.group_log import KeyValue, append_records, read_records
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
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.record_fields import RecordFormatError

log = logging.getLogger(__name__)
GroupHook = Callable[[Group], None]


class _Ownership:
    """This broker leads the partition; its groups are served once ``loaded``."""

    loaded = False


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
        self._store = store
        self._replicas = replicas
        self._min_insync = min_insync
        self._write_timeout_ms = write_timeout_ms
        self._on_loaded = on_loaded
        self._on_unloaded = on_unloaded
        self._owned: dict[int, _Ownership] = {}
        self._loads: set[asyncio.Task[None]] = set()
        self.groups: dict[str, Group] = {}

    # --- ownership -----------------------------------------------------------------------------

    def start(self) -> None:
        """Follow leadership of the offsets partitions, starting with those led now."""
        self._replicas.on_role_change(self.on_role_change)
        for partition in self._replicas:
            self.on_role_change(partition)

    def on_role_change(self, partition: Partition) -> None:
        """Load a partition this broker now leads, unload one it no longer leads."""
        if partition.key.topic != OFFSETS_TOPIC:
            return
        index = partition.key.partition
        if partition.is_leader and index not in self._owned:
            ownership = self._owned[index] = _Ownership()
            task = asyncio.get_running_loop().create_task(self._load(partition, ownership))
            self._loads.add(task)
            task.add_done_callback(self._loads.discard)
        elif not partition.is_leader and index in self._owned:
            self._unload(index)

    def partition_of(self, group_id: str) -> int:
        topic = self._store.image.topics.get(OFFSETS_TOPIC)
        if topic is None:
            raise KafkaError(ErrorCode.not_coordinator, f"no {OFFSETS_TOPIC} topic yet")
        return partition_for_group(group_id, len(topic.partitions))

    def check_owned(self, group_id: str) -> None:
        """Raise NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS unless this broker serves it."""
        ownership = self._owned.get(self.partition_of(group_id))
        if ownership is None:
            raise KafkaError(ErrorCode.not_coordinator, f"not the coordinator of {group_id!r}")
        if not ownership.loaded:
            raise KafkaError(ErrorCode.coordinator_load_in_progress)

    @property
    def loading(self) -> bool:
        return any(not ownership.loaded for ownership in self._owned.values())

    def _unload(self, index: int) -> None:
        del self._owned[index]
        for group_id in [g for g in self.groups if self.partition_of(g) == index]:
            group = self.groups.pop(group_id)
            group.state = GroupState.DEAD
            self._on_unloaded(group)
        log.info("stopped coordinating the groups of %s-%d", OFFSETS_TOPIC, index)

    async def _load(self, partition: Partition, ownership: _Ownership) -> None:
        try:
            groups = replay(read_records(partition))
        except Exception:
            # the partition stays "loading": its groups' clients keep retrying, visibly
            log.exception("cannot load the groups of %s", partition.key)
            return
        await asyncio.sleep(0)
        if self._owned.get(partition.key.partition) is not ownership:
            return  # leadership moved on while reading
        for group in groups:
            self.groups[group.group_id] = group
            self._on_loaded(group)
        ownership.loaded = True
        if groups:
            log.info("loaded %d groups from %s", len(groups), partition.key)

    async def close(self) -> None:
        for task in list(self._loads):
            task.cancel()
        await asyncio.gather(*self._loads, return_exceptions=True)

    # --- writes --------------------------------------------------------------------------------

    async def write(self, group_id: str, records: Sequence[KeyValue]) -> None:
        """Append records for ``group_id`` to its partition; errors as group clients expect."""
        try:
            partition: Partition = self._replicas.get(OFFSETS_TOPIC, self.partition_of(group_id))
        except KafkaError:
            raise KafkaError(ErrorCode.not_coordinator) from None
        await append_records(partition, records, self._min_insync(), self._write_timeout_ms)

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
