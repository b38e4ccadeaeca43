"""Which partitions of a coordinator's internal topic (``__consumer_offsets``,
``__transaction_state``) this broker leads, and so which keys (group ids, transactional
ids) it serves.

Becoming leader of a partition loads its state from the log (meanwhile its keys' requests
get COORDINATOR_LOAD_IN_PROGRESS); losing leadership unloads it (NOT_COORDINATOR, and the
client finds the new coordinator). A single broker becomes leader of every partition at
startup; with replication, coordinator failover is the same path on the new leader.

A broker fenced in place (its etcd session lapsed, the metadata still naming it leader at
the epoch it loaded) keeps the state it loaded and answers NOT_COORDINATOR meanwhile: once
unfenced at that epoch nobody else can have written the partition, so it serves again
without reading the log (a paused etcd leader ends sessions of live brokers, see
docs/cluster.md). A leadership that moves meanwhile unloads it as usual.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from odradek.broker.cluster.coordinator_log import KeyValue, LoadState, append_records, load_state
from odradek.broker.cluster.metadata_store import MetadataStore
from odradek.broker.cluster.partition import Partition
from odradek.broker.cluster.replica_manager import ReplicaManager
from odradek.broker.protocol.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)
LOAD_RETRY_S = 1.0


def java_string_hashcode(text: str) -> int:
    """Java's ``String.hashCode``: a signed 32-bit ``s[0]*31^(n-1) + ... + s[n-1]``."""
    units = text.encode("utf-16-be")
    value = 0
    for index in range(0, len(units), 2):
        value = (value * 31 + (units[index] << 8 | units[index + 1])) & 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


class _Ownership:
    """This broker leads the partition since ``leader_epoch``; its keys are served once
    ``loaded``, and not while ``suspended`` (fenced in place)."""

    def __init__(self, leader_epoch: int) -> None:
        self.leader_epoch = leader_epoch
        self.loaded = False
        self.suspended = False


class CoordinatorPartitions:
    def __init__(
        self,
        topic: str,
        store: MetadataStore,
        replicas: ReplicaManager,
        partition_for: Callable[[str, int], int],
        load: LoadState,
        unload: Callable[[int], None],
        min_insync: Callable[[], int],
        write_timeout_ms: int,
    ) -> None:
        """``partition_for(key, count)`` places a key; ``load(key, records)`` reads the
        records of a newly led partition, in a worker thread, and returns what installs its
        state (called only if this broker still leads it then); ``unload(index)`` drops
        the state of a partition no longer led."""
        self.topic = topic
        self._store = store
        self._replicas = replicas
        self._partition_for = partition_for
        self._load_state = load
        self._unload_state = unload
        self._min_insync = min_insync
        self._write_timeout_ms = write_timeout_ms
        self._owned: dict[int, _Ownership] = {}
        self._loads: set[asyncio.Task[None]] = set()
        # one thread reads the partitions' states, one after the other, as Kafka's loader:
        # the loop's default executor stays free for others (aiohttp's resolver, say)
        self._loader = ThreadPoolExecutor(1, thread_name_prefix=f"{topic}-loader")

    def start(self) -> None:
        """Follow leadership of the topic's partitions, starting with those led now."""
        self._replicas.on_role_change(self.on_role_change)
        for partition in self._replicas:
            self.on_role_change(partition)

    def on_role_change(self, partition: Partition) -> None:
        """Load a partition this broker now leads, unload one it no longer leads."""
        if partition.key.topic != self.topic:
            return
        index = partition.key.partition
        ownership = self._owned.get(index)
        if partition.is_leader:
            if ownership is not None and ownership.suspended:
                if ownership.leader_epoch == partition.state.leader_epoch:
                    ownership.suspended = False
                    log.info("coordinating the keys of %s-%d again, as loaded", self.topic, index)
                    return
                self._stop(index)
            if index not in self._owned:
                ownership = self._owned[index] = _Ownership(partition.state.leader_epoch)
                task = asyncio.get_running_loop().create_task(self._load(partition, ownership))
                self._loads.add(task)
                task.add_done_callback(self._loads.discard)
        elif ownership is not None:
            if self._fenced_in_place(partition, ownership):
                if not ownership.suspended:
                    ownership.suspended = True
                    log.info(
                        "not coordinating the keys of %s-%d while this broker is fenced; "
                        "their state is kept",
                        self.topic,
                        index,
                    )
            else:
                self._stop(index)

    def _fenced_in_place(self, partition: Partition, ownership: _Ownership) -> bool:
        """Whether a led partition stopped being led only because this broker is fenced:
        still served here, still named leader at the epoch whose state was loaded."""
        return (
            ownership.loaded
            and self._replicas.fenced
            and self._replicas.find(partition.key) is partition
            and partition.named_leader
            and partition.state.leader_epoch == ownership.leader_epoch
        )

    def _stop(self, index: int) -> None:
        del self._owned[index]
        self._unload_state(index)
        log.info("stopped coordinating the keys of %s-%d", self.topic, index)

    def partition_of(self, key: str) -> int:
        topic = self._store.image.topics.get(self.topic)
        if topic is None:
            raise KafkaError(ErrorCode.not_coordinator, f"no {self.topic} topic yet")
        return self._partition_for(key, len(topic.partitions))

    def check_owned(self, key: str) -> None:
        """Raise NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS unless this broker serves it."""
        ownership = self._owned.get(self.partition_of(key))
        if ownership is None or ownership.suspended:
            raise KafkaError(ErrorCode.not_coordinator, f"not the coordinator of {key!r}")
        if not ownership.loaded:
            raise KafkaError(ErrorCode.coordinator_load_in_progress)

    def serves(self, key: str) -> bool:
        """Whether ``check_owned`` would let ``key``'s requests through."""
        ownership = self._owned.get(self.partition_of(key))
        return ownership is not None and ownership.loaded and not ownership.suspended

    @property
    def loading(self) -> bool:
        return any(not ownership.loaded for ownership in self._owned.values())

    async def _load(self, partition: Partition, ownership: _Ownership) -> None:
        """Load the partition's state; a load that fails is tried again every
        LOAD_RETRY_S while this broker leads it (meanwhile its keys' clients get
        COORDINATOR_LOAD_IN_PROGRESS and retry)."""
        index = partition.key.partition
        while self._owned.get(index) is ownership:
            try:
                install = await load_state(partition, self._load_state, self._loader)
                if self._owned.get(index) is not ownership:
                    return  # leadership moved on while reading
                install()
            except Exception:
                log.exception("cannot load %s; trying again in %g s", partition.key, LOAD_RETRY_S)
                await asyncio.sleep(LOAD_RETRY_S)
                continue
            ownership.loaded = True
            return

    async def close(self) -> None:
        for task in list(self._loads):
            task.cancel()
        await asyncio.gather(*self._loads, return_exceptions=True)
        self._loader.shutdown(wait=False, cancel_futures=True)

    async def write(
        self,
        key: str,
        records: Sequence[KeyValue],
        transaction: tuple[int, int] | None = None,
    ) -> None:
        """Append records for ``key`` to its partition (in ``transaction``'s producer id and
        epoch, if given); errors as coordinator clients expect."""
        try:
            partition: Partition = self._replicas.get(self.topic, self.partition_of(key))
        except KafkaError:
            raise KafkaError(ErrorCode.not_coordinator) from None
        await append_records(
            partition,
            records,
            self._min_insync(),
            self._write_timeout_ms,
            transaction=transaction,
        )
