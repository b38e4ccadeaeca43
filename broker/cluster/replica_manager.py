"""The partitions this broker hosts, kept in step with the metadata image."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path

from odradek.broker.cluster.log_dir_mover import LogDirMover
from odradek.broker.cluster.metadata_image import MetadataImage, TopicMetadata
from odradek.broker.cluster.partition import Partition, PartitionKey
from odradek.broker.log.log_config import LogConfig
from odradek.broker.log.log_manager import LogManager
from odradek.broker.protocol.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)
LogConfigFor = Callable[[TopicMetadata], LogConfig]
# Called with every partition whose role may have changed (the group coordinator
# loads and unloads __consumer_offsets partitions from it).
RoleListener = Callable[[Partition], None]
# Called with the image and the partitions followed here: key -> (leader, leader epoch).
FollowListener = Callable[[MetadataImage, dict[PartitionKey, tuple[int, int]]], None]


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

    def __iter__(self) -> Iterator[Partition]:
        return iter(list(self._partitions.values()))

    def get(self, topic: str, partition: int) -> Partition:
        key = PartitionKey(topic, partition)
        found = self._partitions.get(key)
        if found is None and key in self._unloaded:
            raise KafkaError(ErrorCode.kafka_storage_error, f"{key}: log directory offline")
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
            partition.fenced = fenced
            self._announce(partition)

    def apply(self, old: MetadataImage | None, new: MetadataImage) -> None:
        """Open logs for partitions assigned here, apply leadership changes, delete the
        logs of partitions no longer assigned here."""
        changed: list[Partition] = []
        unloaded = False
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
                    and self._node_id in state.replicas
                ):
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
                    created = Partition(key, partition_log, state, self._node_id)
                    created.fenced = self._fenced
                    created.future_log = self._logs.future(topic.name, state.partition)
                    self._partitions[key] = created
                    self.log_dir_mover.resume(created)
                    changed.append(created)
        for key, partition in list(self._partitions.items()):
            if not self._assigned_here(new, key):
                log.info("deleting partition %s: no longer assigned to this broker", key)
                del self._partitions[key]
                partition.fenced = True
                self._announce(partition)
                self.log_dir_mover.cancel(partition)
                self._logs.delete(key.topic, key.partition)
        self._unloaded = {key for key in self._unloaded if self._assigned_here(new, key)}
        for partition in changed:
            self._announce(partition)
        if unloaded:
            for offline_listener in self._offline_listeners:
                offline_listener()
        followed = {
            p.key: (p.state.leader, p.state.leader_epoch)
            for p in self._partitions.values()
            if p.state.leader not in (self._node_id, -1)
        }
        for listener in self._follow_listeners:
            listener(new, followed)

    def _assigned_here(self, image: MetadataImage, key: PartitionKey) -> bool:
        topic = image.topics.get(key.topic)
        states = topic.partitions if topic else ()
        return key.partition < len(states) and self._node_id in states[key.partition].replicas

    def _announce(self, partition: Partition) -> None:
        for listener in self._role_listeners:
            listener(partition)
