"""The share coordinator: the durable state of share-partitions, in ``__share_group_state``.

Each share-partition's state lives in the partition its key (``group:topicId:partition``)
hashes to, and the broker leading that partition serves it (ReadShareGroupState,
WriteShareGroupState) to whichever broker leads the share-partition's topic partition.
A write is acknowledged once replicated (``CoordinatorPartitions.write``). A write from a
deposed leader (an older leader epoch) or from before an admin reset the state (an older
state epoch) is refused, so a stale leader cannot overwrite what its successor wrote.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import replace

from odradek.broker.cluster.coordinator_log import LoggedItem, LoggedRecord
from odradek.broker.cluster.coordinator_partitions import (
    CoordinatorPartitions,
    java_string_hashcode,
)
from odradek.broker.cluster.internal_topics import find_coordinator
from odradek.broker.cluster.metadata_image import BrokerRegistration
from odradek.broker.cluster.metadata_store import MetadataStore
from odradek.broker.cluster.partition import PartitionKey
from odradek.broker.cluster.replica_manager import ReplicaManager
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.record_fields import RecordFormatError
from odradek.broker.share.share_config import ShareConfig
from odradek.broker.share.share_state import (
    SHARE_STATE_TOPIC,
    SharePartitionKey,
    ShareState,
    decode_key,
    decode_snapshot,
    encode_key,
    encode_snapshot,
)

log = logging.getLogger(__name__)


def partition_for_share_key(key: str, partitions: int) -> int:
    """Kafka's placement: ``abs(hashCode) % partitions`` of the coordinator key."""
    return (java_string_hashcode(key) & 0x7FFFFFFF) % partitions


class ShareCoordinator:
    def __init__(
        self,
        config: ShareConfig,
        store: MetadataStore,
        replicas: ReplicaManager,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self._store = store
        self._clock = clock
        self.partitions = CoordinatorPartitions(
            SHARE_STATE_TOPIC,
            store,
            replicas,
            partition_for_share_key,
            self._load,
            self._unload,
            lambda: config.state_min_insync,
            config.write_timeout_ms,
        )
        self.states: dict[SharePartitionKey, ShareState] = {}

    def start(self) -> None:
        self.partitions.start()

    async def stop(self) -> None:
        await self.partitions.close()

    async def find_coordinator(self, key: SharePartitionKey) -> BrokerRegistration:
        return await find_coordinator(
            self._store, self.config.state_topic, key.coordinator_key(), partition_for_share_key
        )

    def read(self, key: SharePartitionKey) -> ShareState | None:
        """The share-partition's state; None if it was never written (or was deleted)."""
        self.partitions.check_owned(key.coordinator_key())
        return self.states.get(key)

    async def write(self, key: SharePartitionKey, state: ShareState) -> None:
        """Replace the share-partition's state with ``state``, unless ``state`` is fenced."""
        coordinator_key = key.coordinator_key()
        self.partitions.check_owned(coordinator_key)
        stored = self.states.get(key)
        if stored is not None:
            if state.state_epoch < stored.state_epoch:
                raise KafkaError(
                    ErrorCode.fenced_state_epoch,
                    f"state epoch {state.state_epoch} is older than {stored.state_epoch}",
                )
            if state.leader_epoch < stored.leader_epoch:
                raise KafkaError(
                    ErrorCode.fenced_leader_epoch,
                    f"leader epoch {state.leader_epoch} is older than {stored.leader_epoch}",
                )
        await self._put(key, state)

    async def initialize(self, key: SharePartitionKey, state_epoch: int, start_offset: int) -> None:
        """Start the share-partition afresh at ``start_offset`` (an admin's
        AlterShareGroupOffsets): nothing in flight, a new state epoch that fences the
        partition leader's next write, and any leader epoch accepted after it."""
        self.partitions.check_owned(key.coordinator_key())
        stored = self.states.get(key)
        if stored is not None and state_epoch <= stored.state_epoch:
            raise KafkaError(
                ErrorCode.fenced_state_epoch,
                f"state epoch {state_epoch} is not newer than {stored.state_epoch}",
            )
        await self._put(key, ShareState(start_offset, state_epoch, -1))

    async def delete(self, key: SharePartitionKey) -> None:
        """Forget the share-partition's state (its group was deleted)."""
        coordinator_key = key.coordinator_key()
        self.partitions.check_owned(coordinator_key)
        if key in self.states:
            await self.partitions.write(coordinator_key, [(encode_key(key), None)])
            self.states.pop(key, None)

    async def _put(self, key: SharePartitionKey, state: ShareState) -> None:
        stored = self.states.get(key)
        now = self._now()
        written = replace(
            state,
            create_timestamp=now if stored is None else stored.create_timestamp,
            snapshot_epoch=0 if stored is None else stored.snapshot_epoch + 1,
        )
        await self.partitions.write(
            key.coordinator_key(), [(encode_key(key), encode_snapshot(written, now))]
        )
        self.states[key] = written

    def _load(self, partition: PartitionKey, records: Iterable[LoggedItem]) -> Callable[[], None]:
        loaded: dict[SharePartitionKey, ShareState | None] = {}
        for logged in records:
            if not isinstance(logged, LoggedRecord):
                continue
            try:
                key = decode_key(logged.key)
                loaded[key] = None if logged.value is None else decode_snapshot(logged.value)
            except RecordFormatError as error:
                log.error("skipping an unreadable %s record: %s", SHARE_STATE_TOPIC, error)

        def install() -> None:
            for key, state in loaded.items():
                if state is not None:
                    self.states[key] = state
            if loaded:
                log.info("loaded %d share-partition states from %s", len(loaded), partition)

        return install

    def _unload(self, index: int) -> None:
        for key in [
            key
            for key in self.states
            if self.partitions.partition_of(key.coordinator_key()) == index
        ]:
            del self.states[key]

    def _now(self) -> int:
        return int(self._clock() * 1000)
