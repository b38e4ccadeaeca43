"""Periodic checkpoints: consumer groups' source offsets translated to the target.

Each process checkpoints only the partitions it mirrors (its offset maps know
them); together the processes of a config cover all. With
``syncGroupOffsets`` the translated offsets are also committed into the
target's group while that group has no members there, and never backwards.
Offset syncs (the newest offset run of each partition) are published too, so
a process taking over a partition can translate offsets mirrored before it.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping

from confluent_kafka import (
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
    Producer,
    TopicPartition,
)
from confluent_kafka.admin import AdminClient  # type: ignore[attr-defined]

from .ack_tracker import Partition
from .internal_topics import Checkpoint, Record, offset_sync_record
from .metrics import MirrorMetrics
from .naming import NameFilter, NamingPolicy
from .offset_translation import OffsetMaps
from .topic_sync import MirroredTopic

log = logging.getLogger(__name__)


def plan_checkpoints(
    group: str,
    committed: Mapping[Partition, int],
    routes: Mapping[str, MirroredTopic],
    owned: Collection[Partition],
    offsets: OffsetMaps,
) -> list[Checkpoint]:
    """Checkpoints for the partitions of ``group`` this process owns and can translate."""
    points = []
    for (topic, partition), upstream in sorted(committed.items()):
        route = routes.get(topic)
        if route is None or not route.preserves_partitions or (topic, partition) not in owned:
            continue
        downstream = offsets.translate((topic, partition), upstream)
        if downstream is not None:
            points.append(
                Checkpoint(group, route.target_topic, partition, topic, upstream, downstream)
            )
    return points


class Checkpointer:
    """Writes checkpoints and offset syncs to the target; syncs idle target groups."""

    def __init__(
        self,
        policy: NamingPolicy,
        groups: NameFilter,
        own_group: str,
        source: AdminClient,
        target: AdminClient,
        producer: Producer,
        offsets: OffsetMaps,
        metrics: MirrorMetrics,
        timeout: float = 30.0,
    ) -> None:
        self.policy = policy
        self.groups = groups
        self.own_group = own_group
        self.source = source
        self.target = target
        self.producer = producer
        self.offsets = offsets
        self.metrics = metrics
        self.timeout = timeout
        self._written: dict[bytes, bytes] = {}

    def publish_offset_syncs(self, owned: Collection[Partition]) -> int:
        """Write the newest run of each owned partition that changed; returns how many."""
        records = [
            offset_sync_record(p, run) for p, run in self.offsets.latest().items() if p in owned
        ]
        return self._write(self.policy.offset_syncs_topic, records)

    def checkpoint(
        self, routes: Mapping[str, MirroredTopic], owned: Collection[Partition], sync: bool
    ) -> int:
        """One round over the selected groups; returns the checkpoints written."""
        listing = self.source.list_consumer_groups().result(self.timeout)
        names = sorted(
            g.group_id
            for g in listing.valid
            if g.group_id != self.own_group and self.groups.matches(g.group_id)
        )
        written = 0
        for group in names:
            committed = self._committed(self.source, group)
            points = plan_checkpoints(group, committed, routes, owned, self.offsets)
            written += self._write(self.policy.checkpoints_topic, [p.to_record() for p in points])
            if sync and points:
                self._sync_group(group, points)
        self.metrics.checkpoints.inc(written)
        return written

    def _committed(self, admin: AdminClient, group: str) -> dict[Partition, int]:
        request = [ConsumerGroupTopicPartitions(group)]
        result = admin.list_consumer_group_offsets(request)[group].result(self.timeout)
        return {
            (str(tp.topic), int(tp.partition)): int(tp.offset)
            for tp in result.topic_partitions or ()
            if tp.error is None and tp.offset >= 0
        }

    def _sync_group(self, group: str, points: list[Checkpoint]) -> None:
        try:
            described = self.target.describe_consumer_groups([group])
            description = described[group].result(self.timeout)
            if description.members:
                return  # consumers run on the target: their own commits rule
        except KafkaException as error:
            if error.args[0].code() != KafkaError.GROUP_ID_NOT_FOUND:
                raise
        current = self._committed(self.target, group)
        ahead = [
            TopicPartition(p.topic, p.partition, p.downstream_offset)
            for p in points
            if current.get((p.topic, p.partition), -1) < p.downstream_offset
        ]
        if not ahead:
            return
        request = [ConsumerGroupTopicPartitions(group, ahead)]
        self.target.alter_consumer_group_offsets(request)[group].result(self.timeout)
        self.metrics.group_offsets_synced.inc(len(ahead))
        log.info("Synced %d translated offsets into group %s on the target.", len(ahead), group)

    def _write(self, topic: str, records: list[Record]) -> int:
        """Produce the records that changed since last written; raise unless all were acked."""
        fresh = [(k, v) for k, v in records if self._written.get(k) != v]
        if not fresh:
            return 0
        refused: list[str] = []

        def report(error: KafkaError | None, message: object) -> None:
            if error is not None:
                refused.append(str(error.str()))

        for key, value in fresh:
            self.producer.produce(topic, value, key, on_delivery=report)
        remaining = self.producer.flush(self.timeout)
        if remaining or refused:
            reason = refused[0] if refused else f"{remaining} not acknowledged in time"
            raise KafkaException(f"writing {len(fresh)} records to {topic} failed: {reason}")
        self._written.update(fresh)
        return len(fresh)
