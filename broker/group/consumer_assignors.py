"""The server-side assignors of KIP-848 consumer groups (``group.consumer.assignors``).

Both take every member's subscription (topic ids) and rack, the subscribed topics' layout
and the current target assignment, and return the next target assignment.

- ``uniform`` (the default): as even as the subscriptions allow, sticky (a partition stays
  with its member unless balance needs it elsewhere) and rack-aware (a partition goes to a
  member in a rack holding one of its replicas when balance leaves a choice).
- ``range``: per topic, the partitions in contiguous ranges over the members subscribed to
  it in member order, so co-partitioned topics line up.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass

TargetAssignment = dict[str, dict[uuid.UUID, frozenset[int]]]


@dataclass(frozen=True)
class MemberSubscription:
    topics: frozenset[uuid.UUID]
    rack: str | None = None
    instance_id: str | None = None

    @property
    def order(self) -> str:
        """Static members keep their place across restarts (new member id, same instance)."""
        return self.instance_id or ""


@dataclass(frozen=True)
class TopicLayout:
    partitions: int
    replica_racks: tuple[frozenset[str], ...] = ()  # per partition; empty: racks unknown

    def racks_of(self, partition: int) -> frozenset[str]:
        return self.replica_racks[partition] if partition < len(self.replica_racks) else frozenset()


@dataclass(frozen=True)
class AssignmentSpec:
    members: Mapping[str, MemberSubscription]
    topics: Mapping[uuid.UUID, TopicLayout]
    current: TargetAssignment


Assignor = Callable[[AssignmentSpec], TargetAssignment]
TopicPartition = tuple[uuid.UUID, int]


def uniform(spec: AssignmentSpec) -> TargetAssignment:
    owners: dict[TopicPartition, str] = {}
    owned: dict[str, set[TopicPartition]] = {member: set() for member in spec.members}
    for member, topics in spec.current.items():
        subscription = spec.members.get(member)
        if subscription is None:
            continue
        for topic, partitions in topics.items():
            layout = spec.topics.get(topic)
            if layout is None or topic not in subscription.topics:
                continue
            for partition in partitions:
                if partition < layout.partitions and (topic, partition) not in owners:
                    owners[(topic, partition)] = member
                    owned[member].add((topic, partition))
    eligible = _eligible_members(spec)
    rank = _ranks(spec)

    def best(candidates: list[str], racks: frozenset[str]) -> str:
        return min(
            candidates, key=lambda m: (len(owned[m]), spec.members[m].rack not in racks, rank[m])
        )

    for topic, layout in sorted(spec.topics.items(), key=lambda item: str(item[0])):
        candidates = eligible.get(topic, [])
        for partition in range(layout.partitions):
            if candidates and (topic, partition) not in owners:
                member = best(candidates, layout.racks_of(partition))
                owners[(topic, partition)] = member
                owned[member].add((topic, partition))
    _balance(spec, eligible, owned, owners, rank)
    return _as_target(spec, owned)


def _balance(
    spec: AssignmentSpec,
    eligible: Mapping[uuid.UUID, list[str]],
    owned: dict[str, set[TopicPartition]],
    owners: dict[TopicPartition, str],
    rank: Mapping[str, int],
) -> None:
    """Move partitions from members holding two or more than another member that could take
    them, until no such move is left (the most loaded give first, partitions of other racks
    first, to members of their rack where one can take them)."""
    moved = True
    while moved:
        moved = False
        for giver in sorted(owned, key=lambda m: (-len(owned[m]), rank[m])):
            rack = spec.members[giver].rack
            # a member gives away first the partitions with no replica in its rack
            order = sorted(
                owned[giver],
                key=lambda tp: (rack in spec.topics[tp[0]].racks_of(tp[1]), str(tp[0]), tp[1]),
            )
            for topic, partition in order:
                racks = spec.topics[topic].racks_of(partition)
                takers = [m for m in eligible[topic] if len(owned[m]) + 1 < len(owned[giver])]
                if not takers:
                    continue
                taker = min(
                    takers,
                    key=lambda m: (len(owned[m]), spec.members[m].rack not in racks, rank[m]),
                )
                owned[giver].discard((topic, partition))
                owned[taker].add((topic, partition))
                owners[(topic, partition)] = taker
                moved = True


def range_assignor(spec: AssignmentSpec) -> TargetAssignment:
    owned: dict[str, set[TopicPartition]] = {member: set() for member in spec.members}
    for topic, members in _eligible_members(spec).items():
        count = spec.topics[topic].partitions
        quota, extra = divmod(count, len(members))
        start = 0
        for index, member in enumerate(members):
            size = quota + (1 if index < extra else 0)
            owned[member].update((topic, p) for p in range(start, start + size))
            start += size
    return _as_target(spec, owned)


def _ranks(spec: AssignmentSpec) -> dict[str, int]:
    """Members in a stable order: static members by instance id, then member ids."""
    order = sorted(spec.members, key=lambda m: (spec.members[m].order, m))
    return {member: index for index, member in enumerate(order)}


def _eligible_members(spec: AssignmentSpec) -> dict[uuid.UUID, list[str]]:
    """Per subscribed topic, its subscribers in member order."""
    order = sorted(spec.members, key=_ranks(spec).__getitem__)
    eligible: dict[uuid.UUID, list[str]] = {}
    for member in order:
        for topic in spec.members[member].topics:
            if topic in spec.topics:
                eligible.setdefault(topic, []).append(member)
    return eligible


def _as_target(spec: AssignmentSpec, owned: Mapping[str, set[TopicPartition]]) -> TargetAssignment:
    target: TargetAssignment = {}
    for member in spec.members:
        topics: dict[uuid.UUID, set[int]] = {}
        for topic, partition in owned.get(member, ()):
            topics.setdefault(topic, set()).add(partition)
        target[member] = {topic: frozenset(parts) for topic, parts in topics.items()}
    return target


ASSIGNORS: dict[str, Assignor] = {"uniform": uniform, "range": range_assignor}
# Kafka's class names for the same assignors, accepted in group.consumer.assignors
ASSIGNOR_CLASSES = {
    "org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
    "org.apache.kafka.coordinator.group.assignor.RangeAssignor": "range",
}
