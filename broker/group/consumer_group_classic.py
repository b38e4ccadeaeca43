"""Classic members of a consumer group (KIP-848's migration): consumers on the classic
protocol stay in a group that consumer-protocol members joined, or join one, and are
driven through JoinGroup, SyncGroup and Heartbeat, as Kafka does.

The coordinator computes their assignment like everyone's. A JoinGroup reconciles the
member and answers at once, with the member epoch as generation and no leader, so the
client computes nothing; SyncGroup hands it its partitions in the consumer protocol's
format; a Heartbeat answers REBALANCE_IN_PROGRESS while the member has to catch up with a
newer target, revoke partitions, or may take partitions others released.
"""

from __future__ import annotations

import dataclasses
import uuid

from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.group.consumer_group import ConsumerGroup
from odradek.broker.group.consumer_group_records import member_tombstones
from odradek.broker.group.consumer_heartbeat import ConsumerGroupProtocol
from odradek.broker.group.consumer_member import (
    ClassicMembership,
    ConsumerMember,
    MemberState,
    partitions_of,
)
from odradek.broker.group.consumer_protocol import (
    CONSUMER_PROTOCOL_TYPE,
    assignment_bytes,
    decode_subscription,
)
from odradek.broker.group.group import Group
from odradek.broker.group.group_config import GroupConfig
from odradek.broker.group.group_conversion import topic_ids
from odradek.broker.group.group_writes import KeyValue
from odradek.broker.group.member import JoinResult, SyncResult
from odradek.broker.group.rebalance import UNKNOWN_MEMBER_ID, JoinRequest, SyncRequest
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.record_fields import RecordFormatError


class ClassicMembers:
    def __init__(self, config: GroupConfig, protocol: ConsumerGroupProtocol) -> None:
        self._config = config
        self._protocol = protocol

    async def join(
        self, group: Group, consumer: ConsumerGroup, request: JoinRequest, image: MetadataImage
    ) -> JoinResult:
        if request.protocol_type != CONSUMER_PROTOCOL_TYPE or not request.protocols:
            return JoinResult(ErrorCode.inconsistent_group_protocol, request.member_id)
        if not self._config.accepts_session_timeout(request.session_timeout_ms):
            return JoinResult(ErrorCode.invalid_session_timeout, request.member_id)
        try:
            subscription = decode_subscription(request.protocols[0][1])
        except RecordFormatError:
            return JoinResult(ErrorCode.inconsistent_group_protocol, request.member_id)
        member_id = request.member_id or str(uuid.uuid4())
        if request.member_id == UNKNOWN_MEMBER_ID and request.require_known_member_id:
            return JoinResult(ErrorCode.member_id_required, member_id)
        written: list[KeyValue] = []
        try:
            member = self._joining(group.group_id, consumer, request, member_id, written)
        except KafkaError as error:
            return JoinResult(error.code, request.member_id)
        updated = dataclasses.replace(
            member,
            instance_id=request.group_instance_id,
            rack_id=subscription.rack,
            client_id=request.client_id,
            client_host=request.client_host,
            rebalance_timeout_ms=request.rebalance_timeout_ms,
            server_assignor=None,
            subscribed_topic_names=tuple(sorted(subscription.topics)),
            subscribed_topic_regex=None,
            classic=ClassicMembership(request.session_timeout_ms, request.protocols),
        )
        owned = topic_ids(image, dict(subscription.owned))  # cooperative clients say
        protocol = self._protocol
        reconciled = protocol.reconcile(group.group_id, consumer, member, updated, owned, written)
        protocol.schedule(group, reconciled)
        try:
            await protocol.store(group, consumer, written)
        except KafkaError as error:
            return JoinResult(error.code, member_id)
        assert reconciled.classic is not None
        return JoinResult(
            ErrorCode.none,
            member_id,
            reconciled.member_epoch,
            CONSUMER_PROTOCOL_TYPE,
            reconciled.classic.protocol_name,
            leader_id="",  # nobody computes an assignment: the coordinator did
        )

    def _joining(
        self,
        group_id: str,
        consumer: ConsumerGroup,
        request: JoinRequest,
        member_id: str,
        written: list[KeyValue],
    ) -> ConsumerMember:
        known = consumer.members.get(member_id)
        static_id = consumer.static_members.get(request.group_instance_id or "")
        if static_id is not None and static_id != member_id:
            # a static member back under a new id replaces its old self, partitions and all
            old = consumer.members[static_id]
            old.cancel_timers()
            consumer.remove_member(static_id)
            written += member_tombstones(group_id, static_id)
            target = consumer.target.get(static_id)
            if target is not None:
                consumer.target[member_id] = target
            return dataclasses.replace(
                old, member_id=member_id, session_timer=None, revocation_timer=None
            )
        if known is not None:
            if known.classic is None:
                raise KafkaError(ErrorCode.unknown_member_id)
            return known
        if request.member_id != UNKNOWN_MEMBER_ID:
            raise KafkaError(ErrorCode.unknown_member_id)
        if len(consumer.members) >= self._config.consumer_max_size:
            raise KafkaError(ErrorCode.group_max_size_reached)
        return ConsumerMember(member_id)

    def sync(
        self, group: Group, consumer: ConsumerGroup, request: SyncRequest, image: MetadataImage
    ) -> SyncResult:
        member = self._member(consumer, request.member_id, request.group_instance_id)
        assert member.classic is not None
        if request.generation != member.member_epoch:
            raise KafkaError(ErrorCode.illegal_generation)
        if request.protocol_type not in (None, CONSUMER_PROTOCOL_TYPE) or (
            request.protocol_name not in (None, member.classic.protocol_name)
        ):
            raise KafkaError(ErrorCode.inconsistent_group_protocol)
        if (
            consumer.assignment_epoch > member.member_epoch
            and member.state is not MemberState.UNREVOKED_PARTITIONS
        ):
            raise KafkaError(ErrorCode.rebalance_in_progress)
        self._protocol.schedule(group, member)
        names = {
            name: partitions
            for topic_id, partitions in partitions_of(member.assigned).items()
            if (name := image.topic_name(topic_id)) is not None
        }
        return SyncResult(
            ErrorCode.none,
            CONSUMER_PROTOCOL_TYPE,
            member.classic.protocol_name,
            assignment_bytes(names),
        )

    def heartbeat(
        self,
        group: Group,
        consumer: ConsumerGroup,
        member_id: str,
        instance_id: str | None,
        generation: int,
    ) -> None:
        member = self._member(consumer, member_id, instance_id)
        if generation != member.member_epoch:
            raise KafkaError(ErrorCode.illegal_generation)
        self._protocol.schedule(group, member)
        if (
            member.member_epoch < consumer.assignment_epoch
            or member.state is MemberState.UNREVOKED_PARTITIONS
            or (
                member.state is MemberState.UNRELEASED_PARTITIONS
                and not _waits_for_others(consumer, member)
            )
        ):
            raise KafkaError(ErrorCode.rebalance_in_progress)

    def leave(
        self, group: Group, consumer: ConsumerGroup, leaving: list[tuple[str, str | None]]
    ) -> list[ErrorCode]:
        codes = []
        written: list[KeyValue] = []
        for member_id, instance_id in leaving:
            try:
                if not member_id and instance_id is not None:
                    member_id = consumer.static_members.get(instance_id, "")
                member = self._member(consumer, member_id, instance_id)
            except KafkaError as error:
                codes.append(error.code)
                continue
            written += self._protocol.remove(group, consumer, member, "left the group")
            codes.append(ErrorCode.none)
        if written:
            self._protocol.spawn(self._protocol.store_quietly(group, consumer, written))
        return codes

    @staticmethod
    def _member(consumer: ConsumerGroup, member_id: str, instance_id: str | None) -> ConsumerMember:
        member = consumer.members.get(member_id)
        if member is None or member.classic is None:
            raise KafkaError(ErrorCode.unknown_member_id)
        if instance_id is not None and consumer.static_members.get(instance_id) != member_id:
            raise KafkaError(ErrorCode.fenced_instance_id)
        return member


def _waits_for_others(consumer: ConsumerGroup, member: ConsumerMember) -> bool:
    """Some partition of the member's target is still owned by another member."""
    target = consumer.target.get(member.member_id, {})
    return any(
        consumer.owner_epoch(topic, partition) != -1
        for topic, partitions in target.items()
        for partition in partitions
        if partition not in member.assigned.get(topic, {})
    )
