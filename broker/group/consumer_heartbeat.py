"""ConsumerGroupHeartbeat: the KIP-848 consumer group protocol, driven by the coordinator.

Each heartbeat (1) joins, updates or removes the member; a change of anyone's
subscription, of the subscribed topics' layout or of the assignor bumps the group epoch;
(2) a group epoch past the target assignment's computes a new target with the group's
assignor; (3) the member's assignment moves towards its target
(``consumer_reconciliation``). Records go to ``__consumer_offsets`` before the member is
answered. Session timers remove silent members; a member that does not give up revoked
partitions within its rebalance timeout is fenced.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
import uuid
from collections.abc import Callable, Collection, Coroutine, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from odradek.broker.cluster.background_tasks import BackgroundTasks
from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.group import consumer_group_records as records
from odradek.broker.group.consumer_assignors import ASSIGNORS, AssignmentSpec, MemberSubscription
from odradek.broker.group.consumer_group import ConsumerGroup
from odradek.broker.group.consumer_member import ConsumerMember, MemberState, partitions_of
from odradek.broker.group.consumer_reconciliation import Reconciliation
from odradek.broker.group.group import Group
from odradek.broker.group.group_config import GroupConfig
from odradek.broker.group.group_conversion import can_downgrade, can_upgrade
from odradek.broker.group.group_writes import GroupWrites, KeyValue, WriteRecords
from odradek.broker.group.record_format import GroupKey, encode_key
from odradek.broker.group.subscription_regex import compiled_regex, matches
from odradek.broker.group.topic_layout import existing_topics, layout_hash, topic_layouts
from odradek.broker.protocol.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)

LEAVE_EPOCH = -1
STATIC_LEAVE_EPOCH = -2  # a static member leaves for now; its partitions wait for it


class ProtocolChanges(Protocol):
    """What the coordinator does when a group changes protocol (its classic side)."""

    def upgrade(self, group: Group) -> None:
        """Hand the classic group's members over to a consumer group (``group.consumer``)."""

    def downgrade(self, group: Group) -> list[KeyValue]:
        """Make the consumer group's classic members a classic group; its records."""
        return []


@dataclass(frozen=True)
class HeartbeatRequest:
    member_id: str
    member_epoch: int
    client_id: str
    client_host: str
    instance_id: str | None = None
    rack_id: str | None = None
    rebalance_timeout_ms: int = -1
    subscribed_topic_names: tuple[str, ...] | None = None
    subscribed_topic_regex: str | None = None
    server_assignor: str | None = None
    owned: Mapping[uuid.UUID, tuple[int, ...]] | None = None

    @property
    def is_full(self) -> bool:
        """Kafka's full request (sent after errors): the member restates everything."""
        subscribed = self.subscribed_topic_names is not None or self.subscribed_topic_regex
        return self.rebalance_timeout_ms != -1 and bool(subscribed) and self.owned is not None


@dataclass(frozen=True)
class HeartbeatResult:
    member_id: str
    member_epoch: int
    heartbeat_interval_ms: int
    assignment: Mapping[uuid.UUID, frozenset[int]] | None = None


class ConsumerGroupProtocol:
    def __init__(
        self,
        config: GroupConfig,
        image: Callable[[], MetadataImage],
        write: WriteRecords,
        convert: ProtocolChanges,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._config = config
        self._convert = convert
        self._clock = clock
        self._image = image
        self._writes = GroupWrites(write)
        self._tasks = BackgroundTasks()

    # --- the heartbeat -------------------------------------------------------------------------

    def validate(self, request: HeartbeatRequest, version: int) -> None:
        """Kafka's checks of the request alone (INVALID_REQUEST and friends)."""
        if version >= 1 and not request.member_id:
            raise KafkaError(ErrorCode.invalid_request, "MemberId can't be empty.")
        if request.member_epoch < STATIC_LEAVE_EPOCH:
            raise KafkaError(ErrorCode.invalid_request, "MemberEpoch is invalid.")
        if request.member_epoch == STATIC_LEAVE_EPOCH and request.instance_id is None:
            raise KafkaError(
                ErrorCode.invalid_request,
                "InstanceId can't be null when leaving as a static member.",
            )
        if request.member_epoch == 0:
            if request.rebalance_timeout_ms == -1:
                raise KafkaError(
                    ErrorCode.invalid_request,
                    "RebalanceTimeoutMs must be provided in first request.",
                )
            if request.owned:
                raise KafkaError(
                    ErrorCode.invalid_request, "TopicPartitions must be empty when (re-)joining."
                )
            if request.subscribed_topic_names is None and request.subscribed_topic_regex is None:
                raise KafkaError(
                    ErrorCode.invalid_request,
                    "SubscribedTopicNames or SubscribedTopicRegex must be set in first request.",
                )
        assignor = request.server_assignor
        if assignor is not None and assignor not in self._config.consumer_assignors:
            raise KafkaError(
                ErrorCode.unsupported_assignor, f"ServerAssignor {assignor} is not supported."
            )
        if request.subscribed_topic_regex:
            compiled_regex(request.subscribed_topic_regex)

    async def heartbeat(self, group: Group, request: HeartbeatRequest) -> HeartbeatResult:
        written: list[KeyValue] = []
        consumer = self._consumer_group(group, request, written)
        if request.member_epoch in (LEAVE_EPOCH, STATIC_LEAVE_EPOCH):
            return await self._leave(group, consumer, request, written)
        member = self._member(group.group_id, consumer, request, written)
        updated = dataclasses.replace(
            member,
            instance_id=request.instance_id or member.instance_id,
            rack_id=request.rack_id if request.rack_id is not None else member.rack_id,
            client_id=request.client_id,
            client_host=request.client_host,
            rebalance_timeout_ms=request.rebalance_timeout_ms
            if request.rebalance_timeout_ms != -1
            else member.rebalance_timeout_ms,
            server_assignor=request.server_assignor or member.server_assignor,
            subscribed_topic_names=request.subscribed_topic_names
            if request.subscribed_topic_names is not None
            else member.subscribed_topic_names,
            subscribed_topic_regex=request.subscribed_topic_regex
            if request.subscribed_topic_regex is not None
            else member.subscribed_topic_regex,
        )
        reconciled = self.reconcile(
            group.group_id, consumer, member, updated, request.owned, written
        )
        self.schedule(group, reconciled)
        await self.store(group, consumer, written)
        assignment = None
        if (
            request.member_epoch == 0
            or request.is_full
            or partitions_of(reconciled.assigned) != partitions_of(member.assigned)
        ):
            assignment = partitions_of(reconciled.assigned)
        return HeartbeatResult(
            reconciled.member_id,
            reconciled.member_epoch,
            self._heartbeat_interval_ms(group.group_id),
            assignment,
        )

    def reconcile(
        self,
        group_id: str,
        consumer: ConsumerGroup,
        member: ConsumerMember,
        updated: ConsumerMember,
        owned: Mapping[uuid.UUID, Collection[int]] | None,
        written: list[KeyValue],
    ) -> ConsumerMember:
        """Store the member's update; bump the group epoch if subscriptions, the topics'
        layout or the assignor changed; compute a new target if the group epoch passed it;
        move the member towards its target. The records it takes go to ``written``."""
        image = self._image()
        # a static member's replacement takes over its subscription: no change
        subscription_changed = (
            updated.subscribed_topic_names != member.subscribed_topic_names
            or updated.subscribed_topic_regex != member.subscribed_topic_regex
        )
        known = updated.member_id in consumer.members
        assignor_before = consumer.preferred_assignor(self._config.consumer_assignors[0])
        if updated.metadata() != member.metadata() or not known:
            written.append(records.member_metadata(group_id, updated))
        consumer.put_member(updated)
        assignor = consumer.preferred_assignor(self._config.consumer_assignors[0])
        metadata_hash = layout_hash(image, subscribed_topics(image, consumer.members.values()))
        if (
            subscription_changed
            or assignor != assignor_before
            or metadata_hash != consumer.metadata_hash
        ):
            consumer.group_epoch += 1
            consumer.metadata_hash = metadata_hash
            written.append(records.group_metadata(group_id, consumer))
        if consumer.group_epoch > consumer.assignment_epoch:
            written += self._new_target(group_id, consumer, image, assignor)
        reconciled = Reconciliation(
            consumer.assignment_epoch,
            consumer.target.get(updated.member_id, {}),
            frozenset(subscribed_topics(image, [updated])),
            consumer.owner_epoch,
            owned,
            subscription_changed,
        ).next(updated)
        if reconciled.assignment_state() != member.assignment_state() or not known:
            written.append(records.current_assignment(group_id, reconciled))
        if reconciled is not updated:
            consumer.put_member(reconciled)
        return reconciled

    def _consumer_group(
        self, group: Group, request: HeartbeatRequest, written: list[KeyValue]
    ) -> ConsumerGroup:
        if group.consumer is not None:
            return group.consumer
        if request.member_epoch != 0:
            raise KafkaError(
                ErrorCode.unknown_member_id, f"Group {group.group_id} has no such member."
            )
        if group.members or group.pending_members:
            if not can_upgrade(group, self._config.consumer_migration_policy):
                raise KafkaError(
                    ErrorCode.group_id_not_found,
                    f"Group {group.group_id} is not a consumer group.",
                )
            self._convert.upgrade(group)  # its classic members join the consumer group
            assert group.consumer is not None
            self._writes.restate_next(group.group_id)
            self.start_sessions(group)
            log.info("group %s: upgraded to the consumer protocol", group.group_id)
        else:
            # an empty classic group (say, of committed offsets only) becomes a consumer group
            group.consumer = ConsumerGroup()
        written.append((encode_key(GroupKey(group.group_id)), None))
        return group.consumer

    def _member(
        self,
        group_id: str,
        consumer: ConsumerGroup,
        request: HeartbeatRequest,
        written: list[KeyValue],
    ) -> ConsumerMember:
        member_id = request.member_id or str(uuid.uuid4())  # version 0: the coordinator's
        member = consumer.members.get(member_id)
        static_id = consumer.static_members.get(request.instance_id or "")
        if request.member_epoch == 0:
            if static_id is not None and static_id != member_id:
                return self._replace_static(group_id, consumer, static_id, member_id, written)
            if member is None:
                if len(consumer.members) >= self._config.consumer_max_size:
                    raise KafkaError(
                        ErrorCode.group_max_size_reached,
                        "The consumer group has reached its maximum capacity of "
                        f"{self._config.consumer_max_size} members.",
                    )
                return ConsumerMember(member_id)
            return member
        if member is None:
            raise KafkaError(
                ErrorCode.unknown_member_id, f"Member {member_id} is not a member of the group."
            )
        if static_id is not None and static_id != member_id:
            raise KafkaError(ErrorCode.fenced_instance_id)
        _check_epoch(member, request)
        return member

    def _replace_static(
        self,
        group_id: str,
        consumer: ConsumerGroup,
        old_id: str,
        new_id: str,
        written: list[KeyValue],
    ) -> ConsumerMember:
        """A static member back under a new member id takes over the assignment it left."""
        old = consumer.members[old_id]
        if old.member_epoch != STATIC_LEAVE_EPOCH:
            raise KafkaError(
                ErrorCode.unreleased_instance_id,
                f"Static member {new_id} with instance id {old.instance_id} cannot join the group "
                "because the instance id is owned by another member.",
            )
        old.cancel_timers()
        consumer.remove_member(old_id)
        written += records.member_tombstones(group_id, old_id)
        target = consumer.target.get(old_id)
        replacement = dataclasses.replace(
            old,
            member_id=new_id,
            member_epoch=old.previous_member_epoch,
            session_timer=None,
            revocation_timer=None,
        )
        if target is not None:
            consumer.target[new_id] = target
            written.append(records.target_member(group_id, new_id, target))
        log.info("group %s: static member %s is back as %s", group_id, old.instance_id, new_id)
        return replacement

    async def _leave(
        self,
        group: Group,
        consumer: ConsumerGroup,
        request: HeartbeatRequest,
        written: list[KeyValue],
    ) -> HeartbeatResult:
        member = consumer.members.get(request.member_id)
        if member is None:
            raise KafkaError(
                ErrorCode.unknown_member_id, f"Member {request.member_id} is not in the group."
            )
        if request.member_epoch == STATIC_LEAVE_EPOCH:
            left = dataclasses.replace(
                member,
                previous_member_epoch=member.member_epoch,
                member_epoch=STATIC_LEAVE_EPOCH,
            )
            consumer.put_member(left)
            written.append(records.current_assignment(group.group_id, left))
            log.info("group %s: static member %s left for now", group.group_id, left.instance_id)
        else:
            written += self.remove(group, consumer, member, "left the group")
        await self.store(group, consumer, written)
        return HeartbeatResult(
            request.member_id, request.member_epoch, self._heartbeat_interval_ms(group.group_id)
        )

    def remove(
        self, group: Group, consumer: ConsumerGroup, member: ConsumerMember, reason: str
    ) -> list[KeyValue]:
        """Remove a member; the group's next heartbeat reassigns its partitions."""
        member.cancel_timers()
        consumer.remove_member(member.member_id)
        consumer.group_epoch += 1
        if not consumer.members:
            group.state_timestamp = int(self._clock() * 1000)
        log.info("group %s: member %s %s", group.group_id, member.member_id, reason)
        written = [
            *records.member_tombstones(group.group_id, member.member_id),
            records.group_metadata(group.group_id, consumer),
        ]
        if member.classic is None and can_downgrade(
            consumer, self._config.consumer_migration_policy
        ):
            self.forget(group)
            written += self._convert.downgrade(group)
            log.info("group %s: downgraded to the classic protocol", group.group_id)
        return written

    def _new_target(
        self, group_id: str, consumer: ConsumerGroup, image: MetadataImage, assignor: str
    ) -> list[KeyValue]:
        spec = AssignmentSpec(
            {
                member.member_id: MemberSubscription(
                    frozenset(subscribed_topics(image, [member])),
                    member.rack_id,
                    member.instance_id,
                )
                for member in consumer.members.values()
            },
            topic_layouts(image, subscribed_topics(image, consumer.members.values())),
            consumer.target,
        )
        target = ASSIGNORS[assignor](spec)
        written = [
            records.target_member(group_id, member_id, partitions)
            for member_id, partitions in target.items()
            if consumer.target.get(member_id) != partitions
        ]
        consumer.target = target
        consumer.assignment_epoch = consumer.group_epoch
        written.append(records.target_metadata(group_id, consumer))
        log.info(
            "group %s: epoch %d, %s assignment of %d members",
            group_id,
            consumer.group_epoch,
            assignor,
            len(target),
        )
        return written

    async def store(self, group: Group, consumer: ConsumerGroup, written: list[KeyValue]) -> None:
        """Write the change; after a failed write the next one writes the whole group."""
        snapshot = (
            (lambda: records.snapshot(group.group_id, consumer))
            if group.consumer is consumer
            else None
        )
        await self._writes.store(group.group_id, written, snapshot)

    def _heartbeat_interval_ms(self, group_id: str) -> int:
        """The group's ``consumer.heartbeat.interval.ms`` (a group config), else the broker's."""
        configs = self._image().configs_of_group(group_id)
        return configs.consumer_heartbeat_interval_ms(self._config.consumer_heartbeat_interval_ms)

    def _session_timeout_ms(self, group_id: str) -> int:
        """The group's ``consumer.session.timeout.ms`` (a group config), else the broker's."""
        configs = self._image().configs_of_group(group_id)
        return configs.consumer_session_timeout_ms(self._config.consumer_session_timeout_ms)

    # --- timers --------------------------------------------------------------------------------

    def schedule(self, group: Group, member: ConsumerMember) -> None:
        loop = asyncio.get_running_loop()
        if member.session_timer is not None:
            member.session_timer.cancel()
        session_ms = (
            member.classic.session_timeout_ms
            if member.classic is not None
            else self._session_timeout_ms(group.group_id)
        )
        member.session_timer = loop.call_later(
            session_ms / 1000,
            self._expire,
            group,
            member.member_id,
            "session expired",
        )
        revoking = member.state is MemberState.UNREVOKED_PARTITIONS
        if revoking and member.revocation_timer is None:
            member.revocation_timer = loop.call_later(
                max(member.rebalance_timeout_ms, 0) / 1000,
                self._expire_revocation,
                group,
                member.member_id,
                member.member_epoch,
            )
        elif not revoking and member.revocation_timer is not None:
            member.revocation_timer.cancel()
            member.revocation_timer = None

    def start_sessions(self, group: Group) -> None:
        """Give every member of a group just loaded from the log a fresh session."""
        if group.consumer is not None:
            for member in group.consumer.members.values():
                self.schedule(group, member)

    def _expire(self, group: Group, member_id: str, reason: str) -> None:
        consumer = group.consumer
        member = consumer.members.get(member_id) if consumer is not None else None
        if consumer is None or member is None:
            return
        written = self.remove(group, consumer, member, reason)
        self.spawn(self.store_quietly(group, consumer, written))

    def _expire_revocation(self, group: Group, member_id: str, epoch: int) -> None:
        consumer = group.consumer
        member = consumer.members.get(member_id) if consumer is not None else None
        revoking = member is not None and member.state is MemberState.UNREVOKED_PARTITIONS
        if revoking and member is not None and member.member_epoch == epoch:
            self._expire(group, member_id, "did not revoke its partitions in time")

    def forget(self, group: Group) -> None:
        """Stop serving a group (unloaded or deleted): cancel its timers."""
        if group.consumer is not None:
            for member in group.consumer.members.values():
                member.cancel_timers()
        self._writes.forget(group.group_id)

    async def store_quietly(
        self, group: Group, consumer: ConsumerGroup, written: list[KeyValue]
    ) -> None:
        try:
            await self.store(group, consumer, written)
        except KafkaError as error:
            log.warning("group %s: could not store the group: %s", group.group_id, error.message)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        self._tasks.spawn(work)

    async def close(self) -> None:
        await self._tasks.cancel_all()


def _check_epoch(member: ConsumerMember, request: HeartbeatRequest) -> None:
    """FENCED_MEMBER_EPOCH unless the epoch is the member's, or its previous one with no
    partition beyond its assignment (the answer that bumped it was lost)."""
    received = request.member_epoch
    if received == member.member_epoch:
        return
    if received < member.member_epoch and received == member.previous_member_epoch:
        owned = request.owned or {}
        if all(
            set(partitions) <= member.assigned.get(topic, {}).keys()
            for topic, partitions in owned.items()
        ):
            return
    raise KafkaError(
        ErrorCode.fenced_member_epoch,
        f"The consumer group member has epoch {received} but the coordinator knows it at "
        f"{member.member_epoch}. The member must abandon all its partitions and rejoin.",
    )


def subscribed_topics(
    image: MetadataImage, members: Iterable[ConsumerMember]
) -> dict[uuid.UUID, str]:
    """The existing topics the members subscribe to by name or regex (id -> name); a regex
    matches whole names, internal topics' too, as Kafka's coordinator does."""
    found: dict[uuid.UUID, str] = {}
    for member in members:
        found.update(existing_topics(image, member.subscribed_topic_names))
        if member.subscribed_topic_regex:
            for name, topic in image.topics.items():
                if matches(member.subscribed_topic_regex, name):
                    found[topic.topic_id] = name
    return found
