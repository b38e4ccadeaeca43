"""A live group changing protocol (KIP-848's online migration): a classic group becomes a
consumer group when a consumer-protocol member joins it, keeping every classic member
with its partitions; a consumer group whose last consumer-protocol member leaves becomes
classic again, its members keeping theirs until they rejoin."""

from __future__ import annotations

import uuid

from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.group.consumer_group import ConsumerGroup
from odradek.broker.group.consumer_member import (
    ClassicMembership,
    ConsumerMember,
    MemberState,
    partitions_of,
)
from odradek.broker.group.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    Subscription,
    assignment_bytes,
    decode_assignment,
    decode_subscription,
)
from odradek.broker.group.group import Group
from odradek.broker.group.member import Member
from odradek.broker.protocol.record_fields import RecordFormatError


def can_upgrade(group: Group, policy: str) -> bool:
    return policy in ("bidirectional", "upgrade") and group.protocol_type == CONSUMER_PROTOCOL_TYPE


def can_downgrade(consumer: ConsumerGroup, policy: str) -> bool:
    """Only classic members are left (at least one)."""
    members = consumer.members.values()
    return (
        policy in ("bidirectional", "downgrade")
        and bool(members)
        and all(m.classic is not None for m in members)
    )


def consumer_group_of(group: Group, image: MetadataImage) -> ConsumerGroup:
    """The classic group's members as members of a consumer group at its generation, each
    owning what its last assignment gave it."""
    epoch = group.generation
    consumer = ConsumerGroup(group_epoch=epoch, assignment_epoch=epoch)
    for member in group.members.values():
        protocol = group.protocol_name or member.protocol_names[0]
        subscription = _subscription(member.metadata_for(protocol))
        assigned = {
            topic.topic_id: dict.fromkeys(partitions, epoch)
            for name, partitions in _assignment(member.assignment).items()
            if (topic := image.topics.get(name)) is not None
        }
        converted = ConsumerMember(
            member.member_id,
            instance_id=member.group_instance_id,
            rack_id=subscription.rack,
            client_id=member.client_id,
            client_host=member.client_host,
            subscribed_topic_names=tuple(sorted(subscription.topics)),
            rebalance_timeout_ms=member.rebalance_timeout_ms,
            member_epoch=epoch,
            previous_member_epoch=epoch,
            state=MemberState.STABLE,
            assigned=assigned,
            classic=ClassicMembership(member.session_timeout_ms, member.protocols),
        )
        consumer.put_member(converted)
        consumer.target[member.member_id] = partitions_of(assigned)
    return consumer


def classic_members_of(consumer: ConsumerGroup, image: MetadataImage) -> list[Member]:
    """The consumer group's (classic) members as classic members, with their partitions."""
    members = []
    for member in consumer.members.values():
        assert member.classic is not None
        names = {
            name: partitions
            for topic_id, partitions in partitions_of(member.assigned).items()
            if (name := image.topic_name(topic_id)) is not None
        }
        members.append(
            Member(
                member.member_id,
                member.instance_id,
                member.client_id,
                member.client_host,
                member.rebalance_timeout_ms,
                member.classic.session_timeout_ms,
                CONSUMER_PROTOCOL_TYPE,
                member.classic.protocols,
                assignment_bytes(names),
            )
        )
    return members


def topic_ids(
    image: MetadataImage, partitions: dict[str, tuple[int, ...]]
) -> dict[uuid.UUID, tuple[int, ...]]:
    """Partitions by topic name as partitions by topic id (unknown topics left out)."""
    return {
        topic.topic_id: indexes
        for name, indexes in partitions.items()
        if (topic := image.topics.get(name)) is not None
    }


def _subscription(metadata: bytes) -> Subscription:
    try:
        return decode_subscription(metadata)
    except RecordFormatError:
        return Subscription(frozenset(), {})


def _assignment(data: bytes) -> dict[str, tuple[int, ...]]:
    try:
        return decode_assignment(data)
    except RecordFormatError:
        return {}
