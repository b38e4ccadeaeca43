"""Kafka's SimpleAssignor, the server-side assignor of share groups (KIP-932).

Every partition of the subscribed topics is assigned. When members outnumber partitions a
partition goes to several members (``ceil(members / partitions)`` each), so every member
has work. Balance first: members' counts follow from an even share of all the assignments;
then stickiness: a member keeps what the current target gives it wherever balance allows.
Not rack-aware.

If every member subscribes to the same topics (homogeneous) the partitions of all of them
are shared out together; otherwise each topic is shared out among its own subscribers, so
a member subscribed to two topics gets a share of each.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence

from odradek.broker.group.consumer_assignors import AssignmentSpec, TargetAssignment

SIMPLE_ASSIGNOR_NAME = "simple"

TopicPartition = tuple[uuid.UUID, int]


def simple_assignment(spec: AssignmentSpec, homogeneous: bool) -> TargetAssignment:
    """The next target: ``spec.members`` are the subscriptions (topic ids, of topics
    described in ``spec.topics``), ``spec.current`` the current target."""
    if homogeneous:
        everyone = next(iter(spec.members.values())).topics if spec.members else frozenset()
        rounds = [(sorted(everyone, key=str), list(spec.members))]
    else:
        subscribed = {topic for member in spec.members.values() for topic in member.topics}
        rounds = [
            ([topic], [m for m, wants in spec.members.items() if topic in wants.topics])
            for topic in sorted(subscribed, key=str)
        ]
    assigned: dict[str, dict[uuid.UUID, set[int]]] = {member: {} for member in spec.members}
    for topics, members in rounds:
        partitions = [(topic, p) for topic in topics for p in range(spec.topics[topic].partitions)]
        for member, held in _share_out(partitions, members, spec.current).items():
            for topic, partition in held:
                assigned[member].setdefault(topic, set()).add(partition)
    return {
        member: {topic: frozenset(indexes) for topic, indexes in by_topic.items()}
        for member, by_topic in assigned.items()
    }


def _share_out(
    partitions: Sequence[TopicPartition], members: Sequence[str], current: TargetAssignment
) -> dict[str, set[TopicPartition]]:
    """Kafka's four steps over one set of partitions: keep what each member holds of them,
    take away what a member holds beyond its quota and what a partition has beyond its
    sharing, then hand the rest out round-robin to the members below their quota."""
    if not partitions or not members:
        return {member: set() for member in members}
    sharing = -(-len(members) // len(partitions))  # members per partition, rounded up
    quota = _quotas(sharing * len(partitions), members)
    wanted = set(partitions)
    held = {
        member: [
            (topic, p)
            for topic, indexes in sorted(current.get(member, {}).items(), key=lambda t: str(t[0]))
            for p in sorted(indexes)
            if (topic, p) in wanted
        ][: quota[member]]
        for member in members
    }
    holders: dict[TopicPartition, list[str]] = {partition: [] for partition in partitions}
    for member, items in held.items():
        for partition in items:
            holders[partition].append(member)
    for partition, owners in holders.items():
        for member in owners[sharing:]:
            held[member].remove(partition)
        del owners[sharing:]
    result = {member: set(items) for member, items in held.items()}
    _assign_remaining(partitions, sharing, quota, holders, result)
    return result


def _quotas(assignments: int, members: Sequence[str]) -> dict[str, int]:
    """An even split of ``assignments`` over the members, the larger parts first as Kafka
    computes them (it uses doubles; exact integers give the same counts)."""
    count = len(members)
    return {
        member: -(-assignments * (index + 1) // count) - -(-assignments * index // count)
        for index, member in enumerate(members)
    }


def _assign_remaining(
    partitions: Sequence[TopicPartition],
    sharing: int,
    quota: Mapping[str, int],
    holders: dict[TopicPartition, list[str]],
    result: dict[str, set[TopicPartition]],
) -> None:
    """Walk the partitions once, handing each that lacks members to the next members below
    their quota, round-robin. A partition that every such member already holds keeps fewer
    members (Kafka tolerates that slight imbalance); unlike Kafka's, the walk then goes on
    with the next partitions rather than stopping."""
    unfilled = [member for member in quota if len(result[member]) < quota[member]]
    cursor = 0
    for partition in partitions:
        lacking = sharing - len(holders[partition])
        passed_over = 0  # members in a row that already hold the partition
        while lacking > 0 and unfilled and passed_over < len(unfilled):
            cursor %= len(unfilled)
            member = unfilled[cursor]
            if partition in result[member]:
                cursor += 1
                passed_over += 1
                continue
            result[member].add(partition)
            holders[partition].append(member)
            lacking, passed_over = lacking - 1, 0
            if len(result[member]) >= quota[member]:
                unfilled.pop(cursor)
            else:
                cursor += 1
