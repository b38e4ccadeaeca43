"""ShareGroupHeartbeat: share group (KIP-932) membership, driven by the coordinator, as
Kafka's GroupMetadataManager does it.

Each heartbeat (1) joins (epoch 0), updates or removes (epoch -1) the member; a change of
anyone's subscription or of the subscribed topics' layout bumps the group epoch; (2) a
group epoch past the target assignment's computes a new target with the simple assignor;
(3) a member behind the target takes all of it at once: share groups have no revocation,
a partition may have several members. Records go to ``__consumer_offsets`` before the
member is answered. A member silent for its session timeout is removed. The session
timeout and heartbeat interval are the group's own (``share.session.timeout.ms``,
``share.heartbeat.interval.ms``: dynamic group configs), else the broker's
``group.share.*`` keys.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass

from odradek.broker.cluster.background_tasks import BackgroundTasks
from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.group import share_group_records as records
from odradek.broker.group.consumer_assignors import (
    AssignmentSpec,
    MemberSubscription,
    TargetAssignment,
)
from odradek.broker.group.group import Group
from odradek.broker.group.group_config import GroupConfig
from odradek.broker.group.group_writes import GroupWrites, KeyValue, WriteRecords
from odradek.broker.group.share_assignor import simple_assignment
from odradek.broker.group.share_group import ShareGroup, ShareMember, TopicPartitions
from odradek.broker.group.topic_layout import existing_topics, layout_hash, topic_layouts
from odradek.broker.protocol.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)

JOIN_EPOCH = 0
LEAVE_EPOCH = -1
MAX_MEMBER_ID_LENGTH = 36  # a UUID's text, as Kafka's KafkaApis checks


@dataclass(frozen=True)
class ShareHeartbeatRequest:
    member_id: str
    member_epoch: int
    client_id: str
    client_host: str
    rack_id: str | None = None  # None: unchanged
    subscribed_topic_names: tuple[str, ...] | None = None  # None: unchanged


@dataclass(frozen=True)
class ShareHeartbeatResult:
    member_id: str
    member_epoch: int
    heartbeat_interval_ms: int
    assignment: TopicPartitions | None = None  # None: unchanged


class ShareGroupProtocol:
    def __init__(
        self,
        config: GroupConfig,
        image: Callable[[], MetadataImage],
        write: WriteRecords,
    ) -> None:
        self._config = config
        self._image = image
        self._writes = GroupWrites(write)
        self._tasks = BackgroundTasks()

    # --- the heartbeat -------------------------------------------------------------------------

    @staticmethod
    def validate(group_id: str, request: ShareHeartbeatRequest) -> None:
        """Kafka's checks of the request alone (INVALID_REQUEST), in its order."""
        if not request.member_id or len(request.member_id) > MAX_MEMBER_ID_LENGTH:
            raise KafkaError(ErrorCode.invalid_request, "Invalid member id in the request.")
        if not group_id:
            raise KafkaError(ErrorCode.invalid_request, "GroupId can't be empty.")
        if request.rack_id == "":
            raise KafkaError(ErrorCode.invalid_request, "RackId can't be empty.")
        if request.member_epoch == JOIN_EPOCH and not request.subscribed_topic_names:
            raise KafkaError(
                ErrorCode.invalid_request, "SubscribedTopicNames must be set in first request."
            )
        if request.member_epoch < LEAVE_EPOCH:
            raise KafkaError(ErrorCode.invalid_request, "MemberEpoch is invalid.")

    async def heartbeat(
        self, group: Group, share: ShareGroup, request: ShareHeartbeatRequest
    ) -> ShareHeartbeatResult:
        if request.member_epoch == LEAVE_EPOCH:
            return await self._leave(group, share, request.member_id)
        member = self._member(group.group_id, share, request)
        names = request.subscribed_topic_names
        updated = dataclasses.replace(
            member,
            rack_id=request.rack_id if request.rack_id is not None else member.rack_id,
            client_id=request.client_id,
            client_host=request.client_host,
            subscribed_topic_names=tuple(sorted(set(names)))
            if names is not None
            else member.subscribed_topic_names,
        )
        written: list[KeyValue] = []
        reconciled = self._reconcile(group.group_id, share, member, updated, written)
        self._schedule(group, reconciled)
        await self.store(group, share, written)
        full = request.member_epoch == JOIN_EPOCH or names is not None
        configs = self._image().configs_of_group(group.group_id)
        return ShareHeartbeatResult(
            reconciled.member_id,
            reconciled.member_epoch,
            configs.share_heartbeat_interval_ms(self._config.share_heartbeat_interval_ms),
            reconciled.assigned if full or reconciled.assigned != member.assigned else None,
        )

    def _member(
        self, group_id: str, share: ShareGroup, request: ShareHeartbeatRequest
    ) -> ShareMember:
        member_id = request.member_id
        member = share.members.get(member_id)
        if member is None and len(share.members) >= self._config.share_max_size:
            raise KafkaError(
                ErrorCode.group_max_size_reached,
                "The share group has reached its maximum capacity of "
                f"{self._config.share_max_size} members.",
            )
        if member is None:
            if request.member_epoch != JOIN_EPOCH:
                raise KafkaError(
                    ErrorCode.unknown_member_id,
                    f"Member {member_id} is not a member of group {group_id}.",
                )
            log.info("group %s: member %s joins the share group", group_id, member_id)
            return ShareMember(member_id)
        _check_epoch(member, request.member_epoch)
        return member

    def _reconcile(
        self,
        group_id: str,
        share: ShareGroup,
        member: ShareMember,
        updated: ShareMember,
        written: list[KeyValue],
    ) -> ShareMember:
        """Store the member's update; bump the group epoch if subscriptions or the topics'
        layout changed; compute a new target if the group epoch passed it; move the member
        to its target. The records it takes go to ``written``."""
        known = updated.member_id in share.members
        if updated.metadata() != member.metadata() or not known:
            written.append(records.member_metadata(group_id, updated))
        share.members[updated.member_id] = updated
        image = self._image()
        metadata_hash = _metadata_hash(image, share)
        subscription_changed = updated.subscribed_topic_names != member.subscribed_topic_names
        if subscription_changed or metadata_hash != share.metadata_hash:
            share.group_epoch += 1
            share.metadata_hash = metadata_hash
            written.append(records.group_metadata(group_id, share))
        if share.group_epoch > share.assignment_epoch:
            written += self._new_target(group_id, share, image)
        reconciled = updated
        if updated.member_epoch != share.assignment_epoch:
            reconciled = dataclasses.replace(
                updated,
                member_epoch=share.assignment_epoch,
                previous_member_epoch=updated.member_epoch,
                assigned=share.target.get(updated.member_id, {}),
            )
            share.members[updated.member_id] = reconciled
        if reconciled.assignment_state() != member.assignment_state() or not known:
            written.append(records.current_assignment(group_id, reconciled))
        return reconciled

    def _new_target(self, group_id: str, share: ShareGroup, image: MetadataImage) -> list[KeyValue]:
        subscriptions = {
            member.member_id: MemberSubscription(
                frozenset(existing_topics(image, member.subscribed_topic_names))
            )
            for member in share.members.values()
        }
        topics = existing_topics(image, share.subscribed_topic_names())
        spec = AssignmentSpec(subscriptions, topic_layouts(image, topics), share.target)
        target = simple_assignment(spec, share.is_homogeneous())
        written = [
            records.target_member(group_id, member_id, partitions)
            for member_id, partitions in target.items()
            if share.target.get(member_id) != partitions
        ]
        share.target = target
        share.assignment_epoch = share.group_epoch
        written.append(records.target_metadata(group_id, share))
        if _initialize(share, target, image):
            written.append(records.state_partition_metadata(group_id, share))
        log.info(
            "group %s: share group epoch %d, simple assignment of %d members",
            group_id,
            share.group_epoch,
            len(target),
        )
        return written

    async def _leave(self, group: Group, share: ShareGroup, member_id: str) -> ShareHeartbeatResult:
        member = share.members.get(member_id)
        if member is None:
            raise KafkaError(
                ErrorCode.unknown_member_id,
                f"Member {member_id} is not a member of group {group.group_id}.",
            )
        written = self._remove(group, share, member, "left the group")
        await self.store(group, share, written)
        return ShareHeartbeatResult(member_id, LEAVE_EPOCH, 0)

    def _remove(
        self, group: Group, share: ShareGroup, member: ShareMember, reason: str
    ) -> list[KeyValue]:
        """Remove a member and bump the group epoch: the others' next heartbeats share its
        partitions out again. The records it takes."""
        member.cancel_session()
        share.remove_member(member.member_id)
        share.group_epoch += 1
        share.metadata_hash = _metadata_hash(self._image(), share)
        log.info("group %s: share member %s %s", group.group_id, member.member_id, reason)
        written = [
            *records.member_tombstones(group.group_id, member.member_id),
            records.group_metadata(group.group_id, share),
        ]
        if not share.members:
            # nobody is left to compute a target for: the empty group is up to date
            share.assignment_epoch = share.group_epoch
            written.append(records.target_metadata(group.group_id, share))
        return written

    async def store(self, group: Group, share: ShareGroup, written: list[KeyValue]) -> None:
        """Write records of the group (after a failed write, the whole group)."""
        snapshot = (
            (lambda: records.snapshot(group.group_id, share)) if group.share is share else None
        )
        await self._writes.store(group.group_id, written, snapshot)

    # --- sessions ------------------------------------------------------------------------------

    def _schedule(self, group: Group, member: ShareMember) -> None:
        member.cancel_session()
        configs = self._image().configs_of_group(group.group_id)
        session_ms = configs.share_session_timeout_ms(self._config.share_session_timeout_ms)
        member.session_timer = asyncio.get_running_loop().call_later(
            session_ms / 1000, self._expire, group, member.member_id
        )

    def start_sessions(self, group: Group) -> None:
        """Give every member of a group just loaded from the log a fresh session."""
        if group.share is not None:
            for member in group.share.members.values():
                self._schedule(group, member)

    def _expire(self, group: Group, member_id: str) -> None:
        share = group.share
        member = share.members.get(member_id) if share is not None else None
        if share is None or member is None:
            return
        written = self._remove(group, share, member, "session expired")
        self._tasks.spawn(self._store_quietly(group, share, written))

    async def _store_quietly(
        self, group: Group, share: ShareGroup, written: list[KeyValue]
    ) -> None:
        try:
            await self.store(group, share, written)
        except KafkaError as error:
            log.warning("group %s: could not store the group: %s", group.group_id, error.message)

    def forget(self, group: Group) -> None:
        """Stop serving a group (unloaded or deleted): cancel its members' sessions."""
        if group.share is not None:
            for member in group.share.members.values():
                member.cancel_session()
        self._writes.forget(group.group_id)

    async def close(self) -> None:
        await self._tasks.cancel_all()


def _check_epoch(member: ShareMember, received: int) -> None:
    """FENCED_MEMBER_EPOCH unless the epoch is 0 (rejoining), the member's, or its previous
    one (the answer that moved it on was lost), as Kafka."""
    if received in (JOIN_EPOCH, member.member_epoch, member.previous_member_epoch):
        return
    raise KafkaError(
        ErrorCode.fenced_member_epoch,
        f"The share group member has epoch {received} but the coordinator knows it at "
        f"{member.member_epoch}. The member must abandon all its partitions and rejoin.",
    )


def _metadata_hash(image: MetadataImage, share: ShareGroup) -> int:
    return layout_hash(image, existing_topics(image, share.subscribed_topic_names()))


def _initialize(share: ShareGroup, target: TargetAssignment, image: MetadataImage) -> bool:
    """Count the partitions of ``target`` as initialized; whether any was new."""
    grown = False
    for partitions in target.values():
        for topic_id, indexes in partitions.items():
            name, known = share.initialized.get(topic_id, (image.topic_name(topic_id), frozenset()))
            if name is not None and not indexes <= known:
                share.initialized[topic_id] = (name, known | indexes)
                grown = True
    return grown
