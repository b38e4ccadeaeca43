"""The partitions this broker hosts, kept in step with the metadata image.

The logs of new replicas are made with several files and fsyncs each: the first
INLINE_NEW_LOGS of an image are made on the event loop, at once, the rest in a worker
thread NEW_LOGS_PER_BATCH at a time, so that thousands of new replicas (a large topic)
never hold the loop for long (the broker's etcd session and its clients wait on it).
Meanwhile those replicas answer NOT_LEADER_OR_FOLLOWER, which clients retry.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

from odradek.broker.cluster.log_dir_mover import LogDirMover
from odradek.broker.cluster.metadata_image import MetadataImage, PartitionState, TopicMetadata
from odradek.broker.cluster.partition import Partition, PartitionKey
from odradek.broker.log.log_config import LogConfig
from odradek.broker.log.log_manager import LogManager
from odradek.broker.log.partition_log import PartitionLog
from odradek.broker.protocol.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)
LogConfigFor = Callable[[TopicMetadata], LogConfig]
# Called with every partition whose role may have changed (the group coordinator
# loads and unloads __consumer_offsets partitions from it).
RoleListener = Callable[[Partition], None]
# Called with the image and the partitions followed here: key -> (leader, leader epoch).
FollowListener = Callable[[MetadataImage, dict[PartitionKey, tuple[int, int]]], None]
INLINE_NEW_LOGS = 64  # of one image (the 50 partitions of an internal topic fit)
NEW_LOGS_PER_BATCH = 64


class NewLog(NamedTuple):
    """A log to make off the loop: for which topic, where, its config and its leader epoch
    (-1: not led here)."""

    topic_id: uuid.UUID
    directory: Path
    config: LogConfig
    leader_epoch: int


class ReplicaManager:
    def __init__(self, node_id: int, logs: LogManager, log_config_for: LogConfigFor) -> None:
        self._node_id = node_id
        self._logs = logs
        self._log_config_for = log_config_for
        self._partitions: dict[PartitionKey, Partition] = {}
        # assigned here before the start, with no log loaded while a log dir is offline
        self._unloaded: set[PartitionKey] = set()
        self._offline_listeners: list[Callable[[], object]] = []
        self._role_listeners: list[RoleListener] = []
        self._follow_listeners: list[FollowListener] = []
        self._fenced = False
        self.log_dir_mover = LogDirMover(logs)
        self._image: MetadataImage | None = None
        self._pending: dict[PartitionKey, None] = {}  # new replicas waiting for their logs
        self._in_flight: frozenset[PartitionKey] = frozenset()  # being made in the thread
        self._settled = asyncio.Event()
        self._settled.set()
        self._creating: asyncio.Task[None] | None = None
        self._maker = ThreadPoolExecutor(1, thread_name_prefix="new-logs")

    def __iter__(self) -> Iterator[Partition]:
        return iter(list(self._partitions.values()))

    def get(self, topic: str, partition: int) -> Partition:
        key = PartitionKey(topic, partition)
        found = self._partitions.get(key)
        if found is None and key in self._unloaded:
            raise KafkaError(ErrorCode.kafka_storage_error, f"{key}: log directory offline")
        if found is None and key in self._pending:
            raise KafkaError(ErrorCode.not_leader_or_follower, f"{key}: its log is being made")
        if found is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition)
        return found

    def find(self, key: PartitionKey) -> Partition | None:
        return self._partitions.get(key)

    @property
    def log_dirs(self) -> tuple[Path, ...]:
        """This broker's log directories (log.dirs)."""
        return self._logs.log_dirs

    @property
    def offline_log_dirs(self) -> frozenset[Path]:
        """The log directories an I/O error took offline (their partitions answer
        KAFKA_STORAGE_ERROR)."""
        return frozenset(self._logs.failures.offline)

    def offline_replicas(self) -> frozenset[PartitionKey]:
        """The replicas whose log is in an offline log directory, or may be (assigned here
        before a start that found a log directory failed, and not found in the others)."""
        offline = self.offline_log_dirs
        return frozenset(
            key for key, p in self._partitions.items() if p.log.directory.parent in offline
        ) | frozenset(self._unloaded)

    def on_offline_replicas(self, listener: Callable[[], object]) -> None:
        """Call ``listener()`` when ``offline_replicas`` may have grown: on the thread that
        hit the error when a log directory fails, and when the image assigns a replica
        whose log may be in an offline one."""
        self._offline_listeners.append(listener)
        self._logs.failures.on_failure(lambda _: listener())

    def alter_log_dir(self, key: PartitionKey, path: str) -> None:
        """AlterReplicaLogDirs for one replica; see ``LogDirMover.alter``."""
        self.log_dir_mover.alter(self._partitions.get(key), key, path)

    def on_role_change(self, listener: RoleListener) -> None:
        self._role_listeners.append(listener)

    def on_follow_change(self, listener: FollowListener) -> None:
        self._follow_listeners.append(listener)

    @property
    def fenced(self) -> bool:
        return self._fenced

    def set_fenced(self, fenced: bool) -> None:
        """While fenced (not yet unfenced by the controller, or the coordination session
        lost) this broker leads nothing."""
        if fenced == self._fenced:
            return
        self._fenced = fenced
        for partition in self:
            partition.set_fenced(fenced)
            self._announce(partition)

    def apply(self, old: MetadataImage | None, new: MetadataImage) -> None:
        """Open logs for partitions assigned here, apply leadership changes, delete the
        logs of partitions no longer assigned here."""
        self._image = new
        changed: list[Partition] = []
        unloaded = False
        # at start-up (no old image) every log is made at once: they exist already
        inline = INLINE_NEW_LOGS if old is not None else None
        # Dynamic broker configs are the defaults of every topic's log config.
        broker_configs_changed = old is not None and old.broker_configs != new.broker_configs
        for topic in new.topics.values():
            config = self._log_config_for(topic)
            previous = old.topics.get(topic.name) if old else None
            if previous is not None and (
                broker_configs_changed or previous.configs != topic.configs
            ):
                self._logs.update_config(topic.name, config)
            for state in topic.partitions:
                key = PartitionKey(topic.name, state.partition)
                existing = self._partitions.get(key)
                if existing is not None and existing.state != state:
                    existing.apply_state(state)
                    changed.append(existing)
                elif (
                    existing is None
                    and key not in self._unloaded
                    and key not in self._pending
                    and self._node_id in state.replicas
                ):
                    if key in self._in_flight or inline == 0:
                        self._pending[key] = None
                        continue
                    if inline is not None:
                        inline -= 1
                    try:
                        partition_log = self._logs.get_or_create(
                            topic.name, state.partition, config, new=old is not None
                        )
                    except KafkaError as error:
                        if error.code is not ErrorCode.kafka_storage_error:
                            raise
                        self._unloaded.add(key)
                        unloaded = True
                        continue
                    changed.append(self._serve(key, partition_log, state))
        for key, partition in list(self._partitions.items()):
            if not self._assigned_here(new, key):
                log.info("deleting partition %s: no longer assigned to this broker", key)
                del self._partitions[key]
                partition.set_fenced(True)
                self._announce(partition)
                self.log_dir_mover.cancel(partition)
                self._logs.delete(key.topic, key.partition)
        self._unloaded = {key for key in self._unloaded if self._assigned_here(new, key)}
        self._pending = {key: None for key in self._pending if self._assigned_here(new, key)}
        if self._pending and self._creating is None:
            self._settled.clear()
            self._creating = asyncio.get_running_loop().create_task(self._make_pending())
        for partition in changed:
            self._announce(partition)
        if unloaded:
            self._tell_offline()
        self._tell_followers(new)

    def _serve(
        self, key: PartitionKey, partition_log: PartitionLog, state: PartitionState
    ) -> Partition:
        created = Partition(key, partition_log, state, self._node_id)
        created.fenced = self._fenced
        created.future_log = self._logs.future(key.topic, key.partition)
        self._partitions[key] = created
        self.log_dir_mover.resume(created)
        return created

    def _tell_offline(self) -> None:
        for offline_listener in self._offline_listeners:
            offline_listener()

    def _tell_followers(self, image: MetadataImage) -> None:
        followed = {
            p.key: (p.state.leader, p.state.leader_epoch)
            for p in self._partitions.values()
            if p.state.leader not in (self._node_id, -1)
        }
        for listener in self._follow_listeners:
            listener(image, followed)

    # --- new logs off the event loop ----------------------------------------------------------

    async def settled(self, timeout_s: float) -> None:
        """Wait until every replica assigned here so far has its log, at most ``timeout_s``."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._settled.wait(), timeout_s)

    async def stop(self) -> None:
        """Stop making logs once the batch under way is done (its logs are closed)."""
        if self._creating is not None:
            self._creating.cancel()
            await asyncio.gather(self._creating, return_exceptions=True)
        self._maker.shutdown(wait=True)

    async def _make_pending(self) -> None:
        """Make the pending replicas' logs in the thread, a batch at a time, and serve each
        batch under the image of the moment it is done."""
        loop = asyncio.get_running_loop()
        try:
            while self._pending and self._image is not None:
                batch = list(itertools.islice(self._pending, NEW_LOGS_PER_BATCH))
                try:
                    plan = self._plan(self._image, batch)
                except KafkaError:  # every log directory is offline
                    self._unload(batch)
                    continue
                self._in_flight = frozenset(batch)
                made = loop.run_in_executor(self._maker, self._make, plan)
                try:
                    logs = await asyncio.shield(made)
                except asyncio.CancelledError:
                    for created in await made:
                        if isinstance(created, PartitionLog):
                            created.close()
                    raise
                finally:
                    self._in_flight = frozenset()
                self._adopt(self._image, batch, plan, logs)
        finally:
            self._creating = None
            self._settled.set()

    def _plan(self, image: MetadataImage, batch: list[PartitionKey]) -> list[NewLog]:
        """Where each log of ``batch`` goes, with what config and, for a leader here, epoch."""
        places = self._logs.place([(key.topic, key.partition) for key in batch])
        plan = []
        for key, directory in zip(batch, places, strict=True):
            topic = image.topics[key.topic]
            state = topic.partitions[key.partition]
            epoch = state.leader_epoch if state.leader == self._node_id else -1
            plan.append(NewLog(topic.topic_id, directory, self._log_config_for(topic), epoch))
        return plan

    def _make(self, plan: list[NewLog]) -> list[PartitionLog | KafkaError]:
        """In the thread: the logs of ``plan``, or the KAFKA_STORAGE_ERROR each met."""
        made: list[PartitionLog | KafkaError] = []
        for new in plan:
            try:
                made.append(self._logs.open_new(new.directory, new.config, new.leader_epoch))
            except KafkaError as error:
                made.append(error)
        return made

    def _adopt(
        self,
        image: MetadataImage,
        batch: list[PartitionKey],
        plan: list[NewLog],
        made: list[PartitionLog | KafkaError],
    ) -> None:
        """Serve the logs made for ``batch`` whose replicas ``image`` still assigns here
        (in the same topic: one deleted and created again meanwhile gets a new log)."""
        served, failed = [], []
        for key, new, created in zip(batch, plan, made, strict=True):
            topic = image.topics.get(key.topic)
            if key not in self._pending or topic is None or topic.topic_id != new.topic_id:
                if isinstance(created, PartitionLog):
                    created.delete()
                continue
            del self._pending[key]
            if not isinstance(created, PartitionLog):
                failed.append(key)
                continue
            self._logs.adopt(key.topic, key.partition, created, self._log_config_for(topic))
            served.append(self._serve(key, created, topic.partitions[key.partition]))
        for partition in served:
            self._announce(partition)
        if failed:
            self._unload(failed)
        if served:
            self._tell_followers(image)

    def _unload(self, keys: list[PartitionKey]) -> None:
        """Replicas whose log could not be made: KAFKA_STORAGE_ERROR, and the controller is
        told (``offline_replicas``)."""
        for key in keys:
            self._pending.pop(key, None)
            self._unloaded.add(key)
        self._tell_offline()

    def _assigned_here(self, image: MetadataImage, key: PartitionKey) -> bool:
        topic = image.topics.get(key.topic)
        states = topic.partitions if topic else ()
        return key.partition < len(states) and self._node_id in states[key.partition].replicas

    def _announce(self, partition: Partition) -> None:
        for listener in self._role_listeners:
            listener(partition)
