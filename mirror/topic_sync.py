"""Target topics: created with the source's partition count and allow-listed configs, kept in sync.

``plan_topic`` decides (pure); ``TopicSync`` asks both clusters and applies
the plan with Kafka admin requests (CreateTopics, CreatePartitions,
IncrementalAlterConfigs). Partitions only grow, as in Kafka.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaError, KafkaException
from confluent_kafka.admin import (  # type: ignore[attr-defined]  # re-exported without __all__
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
)

from .constants import SYNCED_TOPIC_CONFIGS
from .metrics import MirrorMetrics
from .naming import NameFilter, NamingPolicy

log = logging.getLogger(__name__)
INTERNAL_TOPIC_CONFIGS = {"cleanup.policy": "compact"}


@dataclass(frozen=True)
class TopicShape:
    """What is copied of a topic: its partition count and the configs set on it."""

    partitions: int
    configs: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class TopicChange:
    """What to do on the target: create, grow to ``partitions``, set ``configs``."""

    create: bool
    partitions: int | None
    configs: Mapping[str, str]


@dataclass(frozen=True)
class MirroredTopic:
    """A source topic being mirrored and where to."""

    source_topic: str
    target_topic: str
    source_partitions: int
    target_partitions: int

    @property
    def preserves_partitions(self) -> bool:
        return self.source_partitions == self.target_partitions


def synced_configs(configs: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in configs.items() if k in SYNCED_TOPIC_CONFIGS}


def plan_topic(source: TopicShape, target: TopicShape | None) -> TopicChange | None:
    """The change bringing the target topic in line with the source, or None if none is due."""
    wanted = synced_configs(source.configs)
    if target is None:
        return TopicChange(True, source.partitions, wanted)
    grow = source.partitions if source.partitions > target.partitions else None
    changed = {k: v for k, v in wanted.items() if target.configs.get(k) != v}
    if grow is None and not changed:
        return None
    return TopicChange(False, grow, changed)


def _result(future: Future[Any], timeout: float) -> Any:
    return future.result(timeout=timeout)


class TopicSync:
    """One rescan: select source topics, create or update their mirrors on the target."""

    def __init__(
        self,
        policy: NamingPolicy,
        selection: NameFilter,
        source: AdminClient,
        target: AdminClient,
        metrics: MirrorMetrics,
        replication_factor: int,
        timeout: float = 30.0,
    ) -> None:
        self.policy = policy
        self.selection = selection
        self.source = source
        self.target = target
        self.metrics = metrics
        self.replication_factor = replication_factor
        self.timeout = timeout

    def ensure_internal_topics(self, exactly_once: bool) -> None:
        """The checkpoints and offset-syncs topics on the target (compacted, one partition),
        and exactly once the mirror-offsets topic."""
        existing = self._partition_counts(self.target)
        names = [self.policy.checkpoints_topic, self.policy.offset_syncs_topic]
        if exactly_once:
            names.append(self.policy.mirror_offsets_topic)
        for name in names:
            if name not in existing:
                self._create(name, TopicChange(True, 1, INTERNAL_TOPIC_CONFIGS))

    def run(self) -> dict[str, MirroredTopic]:
        """Source topic -> its mirror, for every selected topic that exists on the target now.

        Raises KafkaException when a cluster cannot be reached; a topic that
        fails alone is logged, counted and left out until the next rescan.
        """
        source_counts = self._partition_counts(self.source)
        selected = sorted(t for t in source_counts if self.policy.mirrors(t, self.selection))
        target_counts = self._partition_counts(self.target)
        target_names = {t: self.policy.target_topic(t) for t in selected}
        source_configs = self._configs(self.source, selected)
        target_configs = self._configs(
            self.target, [n for n in target_names.values() if n in target_counts]
        )
        mirrored: dict[str, MirroredTopic] = {}
        for topic in selected:
            name = target_names[topic]
            shape = TopicShape(source_counts[topic], source_configs.get(topic, {}))
            current = (
                TopicShape(target_counts[name], target_configs.get(name, {}))
                if name in target_counts
                else None
            )
            change = plan_topic(shape, current)
            if change is not None and not self._apply(name, change):
                if current is None:
                    continue
                change = None
            partitions = current.partitions if current else shape.partitions
            if change is not None and change.partitions is not None:
                partitions = change.partitions
            mirrored[topic] = MirroredTopic(topic, name, shape.partitions, partitions)
        self.metrics.topics.set(len(mirrored))
        return mirrored

    def _partition_counts(self, admin: AdminClient) -> dict[str, int]:
        metadata = admin.list_topics(timeout=self.timeout)
        return {
            name: len(topic.partitions)
            for name, topic in metadata.topics.items()
            if topic.error is None and topic.partitions
        }

    def _configs(self, admin: AdminClient, topics: Iterable[str]) -> dict[str, dict[str, str]]:
        """Configs set explicitly on each topic (not broker defaults)."""
        resources = [ConfigResource(ConfigResource.Type.TOPIC, t) for t in topics]
        if not resources:
            return {}
        found: dict[str, dict[str, str]] = {}
        for resource, future in admin.describe_configs(resources).items():
            try:
                entries: dict[str, ConfigEntry] = _result(future, self.timeout)
            except KafkaException as error:
                self._failed(resource.name, "describe its configs", error)
                continue
            found[resource.name] = {
                name: str(entry.value)
                for name, entry in entries.items()
                if ConfigSource(entry.source) == ConfigSource.DYNAMIC_TOPIC_CONFIG
                and entry.value is not None
            }
        return found

    def _apply(self, name: str, change: TopicChange) -> bool:
        if change.create:
            return self._create(name, change)
        try:
            if change.partitions is not None:
                new = NewPartitions(name, change.partitions)
                _result(self.target.create_partitions([new])[name], self.timeout)
                log.info("Grew target topic %s to %d partitions.", name, change.partitions)
            if change.configs:
                resource = ConfigResource(
                    ConfigResource.Type.TOPIC,
                    name,
                    incremental_configs=[
                        ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET)
                        for k, v in sorted(change.configs.items())
                    ],
                )
                _result(self.target.incremental_alter_configs([resource])[resource], self.timeout)
                log.info("Updated configs of target topic %s: %s.", name, _listing(change.configs))
        except KafkaException as error:
            self._failed(name, "update it", error)
            return False
        return True

    def _create(self, name: str, change: TopicChange) -> bool:
        assert change.partitions is not None
        topic = NewTopic(
            name,
            num_partitions=change.partitions,
            replication_factor=self.replication_factor,
            config=dict(change.configs),
        )
        try:
            _result(self.target.create_topics([topic])[name], self.timeout)
        except KafkaException as error:
            if error.args[0].code() == KafkaError.TOPIC_ALREADY_EXISTS:
                return True  # another mirror process of the same config was first
            self._failed(name, "create it", error)
            return False
        log.info(
            "Created target topic %s with %d partitions%s.",
            name,
            change.partitions,
            f" and {_listing(change.configs)}" if change.configs else "",
        )
        return True

    def _failed(self, topic: str, doing: str, error: KafkaException) -> None:
        self.metrics.errors.labels("topic_sync").inc()
        log.warning("Topic %s: could not %s: %s.", topic, doing, error.args[0].str())


def _listing(configs: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sorted(configs.items()))
