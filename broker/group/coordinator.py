"""The group coordinator: what the group APIs' handlers call.

Membership runs in ``Rebalancer`` (JoinGroup, SyncGroup, Heartbeat, LeaveGroup),
``ConsumerGroupProtocol`` (ConsumerGroupHeartbeat) and ``ShareGroupProtocol``
(ShareGroupHeartbeat); which groups this broker serves and their storage is
``GroupCatalog``; this module adds the offset APIs, the group admin APIs and offset expiry.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from odradek.broker.cluster.internal_topics import ensure_internal_topic, find_coordinator
from odradek.broker.cluster.metadata_image import BrokerRegistration, TopicMetadata
from odradek.broker.cluster.metadata_store import MetadataStore
from odradek.broker.cluster.replica_manager import ReplicaManager
from odradek.broker.group import consumer_group_records as consumer_records
from odradek.broker.group import share_group_records as share_records
from odradek.broker.group.consumer_group_classic import ClassicMembers
from odradek.broker.group.consumer_heartbeat import (
    ConsumerGroupProtocol,
    HeartbeatRequest,
    HeartbeatResult,
)
from odradek.broker.group.consumer_protocol import CONSUMER_PROTOCOL_TYPE
from odradek.broker.group.group import Group, TopicPartition
from odradek.broker.group.group_catalog import GroupCatalog
from odradek.broker.group.group_config import GroupConfig
from odradek.broker.group.group_conversion import classic_members_of, consumer_group_of
from odradek.broker.group.group_partition import partition_for_group
from odradek.broker.group.group_state import GroupState
from odradek.broker.group.member import JoinResult, SyncResult
from odradek.broker.group.offsets_retention import expired_offsets
from odradek.broker.group.offsets_topic import offsets_topic
from odradek.broker.group.rebalance import UNKNOWN_MEMBER_ID, JoinRequest, Rebalancer, SyncRequest
from odradek.broker.group.record_format import (
    CommittedOffset,
    GroupKey,
    OffsetKey,
    encode_group,
    encode_key,
    encode_offset,
)
from odradek.broker.group.share_group import InitializedTopics, ShareGroup
from odradek.broker.group.share_heartbeat import (
    ShareGroupProtocol,
    ShareHeartbeatRequest,
    ShareHeartbeatResult,
)
from odradek.broker.log.steady_clock import steady_clock
from odradek.broker.protocol.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OffsetToCommit:
    offset: int
    leader_epoch: int
    metadata: str | None
    retention_ms: int = -1  # OffsetCommit v2-v4's retention_time; -1: the broker's retention


class GroupCoordinator:
    def __init__(
        self,
        config: GroupConfig,
        store: MetadataStore,
        replicas: ReplicaManager,
        min_insync: Callable[[], int],
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.config = config
        self._store = store
        self._replicas = replicas
        # steady: a stepped system clock does not expire committed offsets early
        self._clock = clock = clock or steady_clock()
        self.rebalancer = Rebalancer(config, self._persist_group, clock)
        self.catalog = GroupCatalog(
            store,
            replicas,
            min_insync,
            config.commit_timeout_ms,
            on_loaded=self._loaded,
            on_unloaded=lambda group: self._forget(group, ErrorCode.not_coordinator),
        )
        self.consumer_protocol = ConsumerGroupProtocol(
            config, lambda: store.image, self.catalog.write, self, clock
        )
        self.classic_members = ClassicMembers(config, self.consumer_protocol)
        self.share_protocol = ShareGroupProtocol(config, lambda: store.image, self.catalog.write)
        self.offset_commits = 0
        self._expiry: asyncio.Task[None] | None = None

    # --- life cycle ----------------------------------------------------------------------------

    def start(self) -> None:
        """Serve the groups of the partitions this broker leads now and whenever that changes."""
        self.catalog.start()
        self._expiry = asyncio.get_running_loop().create_task(self._expire_offsets_every())

    async def stop(self) -> None:
        if self._expiry is not None:
            self._expiry.cancel()
            await asyncio.gather(self._expiry, return_exceptions=True)
        await self.catalog.close()
        await self.rebalancer.close()
        await self.consumer_protocol.close()
        await self.share_protocol.close()
        for group in self.catalog.groups.values():
            self._forget(group, ErrorCode.not_coordinator)

    def _loaded(self, group: Group) -> None:
        self.rebalancer.start_sessions(group)
        self.consumer_protocol.start_sessions(group)
        self.share_protocol.start_sessions(group)

    def _forget(self, group: Group, error: ErrorCode) -> None:
        self.rebalancer.forget(group, error)
        self.consumer_protocol.forget(group)
        self.share_protocol.forget(group)

    async def find_coordinator(self, group_id: str) -> BrokerRegistration:
        topic = offsets_topic(self.config)
        return await find_coordinator(self._store, topic, group_id, partition_for_group)

    async def ensure_offsets_topic(self) -> TopicMetadata:
        return await ensure_internal_topic(self._store, offsets_topic(self.config))

    # --- membership ----------------------------------------------------------------------------

    async def join(self, group_id: str, request: JoinRequest) -> JoinResult:
        try:
            group = self._group(group_id, valid_if_empty=False)
        except KafkaError as error:
            return JoinResult(error.code, request.member_id)
        if group is None:
            if request.member_id != UNKNOWN_MEMBER_ID:
                return JoinResult(ErrorCode.unknown_member_id, request.member_id)
            group = self.catalog.groups[group_id] = Group(group_id, self._now())
        if group.share is not None:
            return JoinResult(ErrorCode.inconsistent_group_protocol, UNKNOWN_MEMBER_ID)
        if group.consumer is not None:
            if group.consumer.members:
                return await self.classic_members.join(
                    group, group.consumer, request, self._store.image
                )
            # an empty consumer group becomes a classic group again
            tombstones = consumer_records.group_tombstones(group_id, group.consumer)
            group.consumer = None
            try:
                await self.catalog.write(group_id, tombstones)
            except KafkaError as error:
                return JoinResult(error.code, request.member_id)
        return await self.rebalancer.join(group, request)

    async def consumer_heartbeat(
        self, group_id: str, request: HeartbeatRequest, version: int
    ) -> HeartbeatResult:
        """ConsumerGroupHeartbeat (KIP-848)."""
        self.consumer_protocol.validate(request, version)
        group = self._group(group_id, valid_if_empty=False)
        if group is None:
            if request.member_epoch != 0:
                raise KafkaError(
                    ErrorCode.unknown_member_id, f"Group {group_id} has no such member."
                )
            group = self.catalog.groups[group_id] = Group(group_id, self._now())
        if group.share is not None:
            raise KafkaError(
                ErrorCode.group_id_not_found, f"Group {group_id} is not a consumer group."
            )
        if group.is_(GroupState.DEAD):
            raise KafkaError(ErrorCode.coordinator_not_available)
        return await self.consumer_protocol.heartbeat(group, request)

    async def share_heartbeat(
        self, group_id: str, request: ShareHeartbeatRequest
    ) -> ShareHeartbeatResult:
        """ShareGroupHeartbeat (KIP-932). A group id that another kind of group holds is
        GROUP_ID_NOT_FOUND, as in Kafka (groups do not change to or from share groups)."""
        self.share_protocol.validate(group_id, request)
        group = self._group(group_id, valid_if_empty=False)
        if group is None:
            if request.member_epoch != 0:
                raise KafkaError(ErrorCode.group_id_not_found, f"Share group {group_id} not found.")
            group = self.catalog.groups[group_id] = Group(group_id, self._now())
            group.share = ShareGroup()
        if group.share is None:
            raise KafkaError(
                ErrorCode.group_id_not_found, f"Group {group_id} is not a share group."
            )
        return await self.share_protocol.heartbeat(group, group.share, request)

    def is_share_member(self, group_id: str, member_id: str) -> bool:
        """Whether ``member_id`` is a member of share group ``group_id`` right now, for the
        share-partition side (ShareFetch, ShareAcknowledge): a dictionary look-up, no I/O,
        never an error. Only the groups this broker coordinates are known: it answers False
        for a group another broker coordinates or whose partition is still loading."""
        group = self.catalog.groups.get(group_id)
        return group is not None and group.share is not None and member_id in group.share.members

    async def sync(self, group_id: str, request: SyncRequest) -> SyncResult:
        try:
            group = self._classic_member_group(group_id)
            if group.consumer is not None:
                return self.classic_members.sync(group, group.consumer, request, self._store.image)
            return await self.rebalancer.sync(group, request)
        except KafkaError as error:
            return SyncResult(error.code)

    def heartbeat(
        self, group_id: str, member_id: str, group_instance_id: str | None, generation: int
    ) -> None:
        group = self._classic_member_group(group_id)
        if group.consumer is not None:
            self.classic_members.heartbeat(
                group, group.consumer, member_id, group_instance_id, generation
            )
        else:
            self.rebalancer.heartbeat(group, member_id, group_instance_id, generation)

    def leave(self, group_id: str, members: list[tuple[str, str | None]]) -> list[ErrorCode]:
        group = self._classic_member_group(group_id)
        if group.consumer is not None:
            return self.classic_members.leave(group, group.consumer, members)
        return self.rebalancer.leave(group, members)

    # --- a live group changing protocol (ProtocolChanges) ----------------------------------

    def upgrade(self, group: Group) -> None:
        """The classic members move into a consumer group with their partitions; those
        waiting on a join or sync are told to rejoin."""
        consumer = consumer_group_of(group, self._store.image)
        self.rebalancer.forget(group, ErrorCode.rebalance_in_progress)
        group.members, group.static_members, group.pending_members = {}, {}, set()
        group.leader_id = group.protocol_name = None
        group.state = GroupState.EMPTY
        group.consumer = consumer

    def downgrade(self, group: Group) -> list[tuple[bytes, bytes | None]]:
        """The consumer group's classic members form a classic group again, keeping their
        partitions, and rebalance; the records that replace the consumer group's."""
        consumer = group.consumer
        assert consumer is not None
        tombstones = consumer_records.group_tombstones(group.group_id, consumer)
        group.consumer = None
        group.generation = consumer.group_epoch
        for member in classic_members_of(consumer, self._store.image):
            group.add(member)
        group.protocol_name = group.select_protocol()
        group.state = GroupState.STABLE
        self.rebalancer.start_sessions(group)
        self.rebalancer.prepare_rebalance(group, "downgraded from the consumer protocol")
        return [*tombstones, (encode_key(GroupKey(group.group_id)), encode_group(group.stored()))]

    # --- offsets -------------------------------------------------------------------------------

    async def commit_offsets(
        self,
        group_id: str,
        generation: int,
        member_id: str,
        group_instance_id: str | None,
        offsets: Mapping[TopicPartition, OffsetToCommit],
    ) -> dict[TopicPartition, ErrorCode]:
        try:
            group = self._group(group_id, valid_if_empty=True)
            if group is None:
                if generation >= 0:
                    raise KafkaError(ErrorCode.illegal_generation)
                group = self.catalog.groups[group_id] = Group(group_id, self._now())
            _refuse_share_group(group)
            self._check_commit(group, generation, member_id, group_instance_id)
            stale = self._stale_consumer_commits(group, generation, member_id, offsets)
        except KafkaError as error:
            return dict.fromkeys(offsets, error.code)
        results, accepted = self._validate_offsets(
            {key: item for key, item in offsets.items() if key not in stale}
        )
        results.update(stale)
        if accepted:
            try:
                await self._write_offsets(group, accepted)
            except KafkaError as error:
                results.update(dict.fromkeys(accepted, error.code))
            else:
                results.update(dict.fromkeys(accepted, ErrorCode.none))
                self.offset_commits += len(accepted)
        return results

    async def commit_transactional_offsets(
        self,
        group_id: str,
        producer: tuple[int, int],
        generation: int,
        member_id: str,
        group_instance_id: str | None,
        offsets: Mapping[TopicPartition, OffsetToCommit],
    ) -> dict[TopicPartition, ErrorCode]:
        """TxnOffsetCommit: offsets written in the producer's transaction, pending until its
        COMMIT marker (``complete_transaction``); the member checks apply when the request
        names a generation (v3+), as in Kafka."""
        try:
            group = self._group(group_id, valid_if_empty=True)
            if group is None:
                group = self.catalog.groups[group_id] = Group(group_id, self._now())
            _refuse_share_group(group)
            stale: dict[TopicPartition, ErrorCode] = {}
            if generation >= 0 or member_id:
                self._check_commit(group, generation, member_id, group_instance_id)
                stale = self._stale_consumer_commits(group, generation, member_id, offsets)
        except KafkaError as error:
            return dict.fromkeys(offsets, error.code)
        results, accepted = self._validate_offsets(
            {key: item for key, item in offsets.items() if key not in stale}
        )
        results.update(stale)
        if accepted:
            records = [
                (encode_key(OffsetKey(group_id, topic, partition)), encode_offset(value))
                for (topic, partition), value in accepted.items()
            ]
            # pending from before the write, so that a require_stable OffsetFetch meanwhile
            # is not answered the offsets this transaction is replacing
            pending = group.transactional_offsets.setdefault(producer[0], {})
            earlier = {key: pending[key] for key in accepted if key in pending}
            pending.update(accepted)
            try:
                await self.catalog.write(group_id, records, transaction=producer)
            except KafkaError as error:
                for key in accepted.keys() - earlier.keys():
                    pending.pop(key, None)
                pending.update(earlier)
                results.update(dict.fromkeys(accepted, error.code))
            else:
                results.update(dict.fromkeys(accepted, ErrorCode.none))
        return results

    def complete_transaction(self, offsets_partition: int, producer_id: int, commit: bool) -> None:
        """A marker in one of this coordinator's partitions: the producer's pending offsets
        there become committed, or are dropped."""
        for group in self.catalog.groups.values():
            if self.catalog.partitions.partition_of(group.group_id) != offsets_partition:
                continue
            pending = group.transactional_offsets.pop(producer_id, None)
            if pending and commit:
                group.offsets.update(pending)

    def _check_commit(
        self, group: Group, generation: int, member_id: str, group_instance_id: str | None
    ) -> None:
        if group.is_(GroupState.DEAD):
            raise KafkaError(ErrorCode.coordinator_not_available)
        if group.consumer is not None:
            return  # checked per partition: _consumer_commit_errors
        if group.is_fenced(member_id, group_instance_id):
            raise KafkaError(ErrorCode.fenced_instance_id)
        if generation < 0 and group.is_(GroupState.EMPTY):
            return  # a standalone consumer (assign()) only stores offsets here
        if group.is_(GroupState.COMPLETING_REBALANCE):
            raise KafkaError(ErrorCode.rebalance_in_progress)
        member = group.members.get(member_id)
        if member is None:
            raise KafkaError(ErrorCode.unknown_member_id)
        if generation != group.generation:
            raise KafkaError(ErrorCode.illegal_generation)
        # a commit counts as a heartbeat, and is allowed while the group prepares to
        # rebalance: members commit what they processed before giving partitions up
        self.rebalancer.keep_alive(group, member)

    def _stale_consumer_commits(
        self, group: Group, epoch: int, member_id: str, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, ErrorCode]:
        """A KIP-848 member commits with its member epoch: a newer epoch is refused, an older
        one only for partitions it got at or before that epoch (KIP-1251), as in Kafka."""
        consumer = group.consumer
        if consumer is None or (epoch < 0 and not consumer.members):
            return {}  # a classic group, or offsets stored by an admin or assign() consumer
        member = consumer.members.get(member_id)
        if member is None:
            raise KafkaError(
                ErrorCode.unknown_member_id, f"Member {member_id} is not a member of the group."
            )
        # a classic member's epoch is its generation: Kafka's error for it is ILLEGAL_GENERATION
        stale_code = (
            ErrorCode.illegal_generation if member.classic else ErrorCode.stale_member_epoch
        )
        if epoch > member.member_epoch:
            raise KafkaError(
                stale_code,
                f"Received member epoch {epoch} is newer than the member's {member.member_epoch}.",
            )
        if epoch == member.member_epoch:
            return {}
        image = self._store.image
        stale = {}
        for topic, partition in partitions:
            metadata = image.topics.get(topic)
            assigned = member.assignment_epoch(metadata.topic_id, partition) if metadata else None
            if assigned is None or epoch < assigned:
                stale[(topic, partition)] = stale_code
        return stale

    def _validate_offsets(
        self, offsets: Mapping[TopicPartition, OffsetToCommit]
    ) -> tuple[dict[TopicPartition, ErrorCode], dict[TopicPartition, CommittedOffset]]:
        image = self._store.image
        now = self._now()
        errors: dict[TopicPartition, ErrorCode] = {}
        accepted: dict[TopicPartition, CommittedOffset] = {}
        for (topic, partition), item in offsets.items():
            known = image.topics.get(topic)
            if known is None or not 0 <= partition < len(known.partitions):
                errors[(topic, partition)] = ErrorCode.unknown_topic_or_partition
            elif len((item.metadata or "").encode()) > self.config.offset_metadata_max_bytes:
                errors[(topic, partition)] = ErrorCode.offset_metadata_too_large
            else:
                expire = now + item.retention_ms if item.retention_ms >= 0 else -1
                accepted[(topic, partition)] = CommittedOffset(
                    item.offset, item.leader_epoch, item.metadata, now, expire
                )
        return errors, accepted

    async def _write_offsets(
        self, group: Group, offsets: Mapping[TopicPartition, CommittedOffset | None]
    ) -> None:
        """Store (or, with None, delete) offsets of ``group``, then apply them in memory."""
        records = [
            (
                encode_key(OffsetKey(group.group_id, topic, partition)),
                encode_offset(value) if value is not None else None,
            )
            for (topic, partition), value in offsets.items()
        ]
        await self.catalog.write(group.group_id, records)
        for key, value in offsets.items():
            if value is None:
                group.offsets.pop(key, None)
            else:
                group.offsets[key] = value

    def fetch_offsets(
        self,
        group_id: str,
        partitions: Iterable[TopicPartition] | None,
        member: tuple[str | None, int] = (None, -1),
    ) -> dict[TopicPartition, CommittedOffset | None]:
        """Committed offsets (None: none committed); ``partitions=None`` asks for all. A KIP-848
        member (OffsetFetch v9+) names itself and its epoch, which must be current."""
        group = self._group(group_id, valid_if_empty=True)
        member_id, epoch = member
        if group is not None and group.consumer is not None and (member_id or epoch >= 0):
            known = group.consumer.members.get(member_id or "")
            if known is None:
                raise KafkaError(
                    ErrorCode.unknown_member_id, f"Member {member_id} is not in group {group_id}."
                )
            if known.member_epoch != epoch:
                raise KafkaError(
                    ErrorCode.stale_member_epoch,
                    f"The received member epoch {epoch} does not match the member's "
                    f"{known.member_epoch}.",
                )
        committed = group.offsets if group is not None else {}
        if partitions is None:
            return dict(committed)
        return {key: committed.get(key) for key in partitions}

    def pending_transactional(self, group_id: str) -> set[TopicPartition]:
        """The partitions with offsets written in a transaction that has not ended yet."""
        group = self.catalog.groups.get(group_id)
        if group is None:
            return set()
        return {key for pending in group.transactional_offsets.values() for key in pending}

    async def delete_offsets(
        self, group_id: str, partitions: Iterable[TopicPartition]
    ) -> dict[TopicPartition, ErrorCode]:
        group = self._existing(group_id, ErrorCode.group_id_not_found, valid_if_empty=True)
        if group.is_(GroupState.DEAD):
            raise KafkaError(ErrorCode.group_id_not_found)
        _refuse_share_group(group)
        subscribed: Callable[[str], bool] = frozenset().__contains__
        if group.consumer is not None:
            subscribed = group.consumer.subscribes_to
        elif not group.is_(GroupState.EMPTY):
            if group.protocol_type != CONSUMER_PROTOCOL_TYPE:
                raise KafkaError(ErrorCode.non_empty_group)
            subscribed = (group.subscribed_topics() or frozenset()).__contains__
        results = {
            key: ErrorCode.group_subscribed_to_topic if subscribed(key[0]) else ErrorCode.none
            for key in partitions
        }
        deletable = {key: None for key, code in results.items() if code is ErrorCode.none}
        if deletable:
            await self._write_offsets(group, deletable)
        return results

    # --- group administration ------------------------------------------------------------------

    def describe(self, group_id: str) -> Group | None:
        """The group, or None if this coordinator has none of that id (Kafka: Dead)."""
        return self._group(group_id, valid_if_empty=True)

    def describe_share_group(self, group_id: str) -> ShareGroup:
        """ShareGroupDescribe's group: GROUP_ID_NOT_FOUND if there is none or it is not a
        share group, INVALID_GROUP_ID for an empty id, as in Kafka."""
        group = self._group(group_id, valid_if_empty=False)
        if group is None:
            raise KafkaError(ErrorCode.group_id_not_found, f"Group {group_id} not found.")
        if group.share is None:
            raise KafkaError(
                ErrorCode.group_id_not_found, f"Group {group_id} is not a share group."
            )
        return group.share

    def list_groups(self, states: Iterable[str] = ()) -> list[Group]:
        wanted = {state.lower() for state in states}
        if self.catalog.loading:
            raise KafkaError(ErrorCode.coordinator_load_in_progress)
        return [
            group
            for group in self.catalog.groups.values()
            if (not wanted or group.state_name.lower() in wanted)
            and self.catalog.partitions.serves(group.group_id)
        ]

    # --- share group offsets ---------------------------------------------------------------

    def share_partitions(self, group_id: str) -> InitializedTopics:
        """The share group's share-partitions (what DescribeShareGroupOffsets and the
        deletion of the group's state cover)."""
        return dict(self.describe_share_group(group_id).initialized)

    def share_partitions_if_share_group(self, group_id: str) -> InitializedTopics:
        """The share-partitions of a share group; nothing for another kind or no group."""
        group = self._group(group_id, valid_if_empty=True)
        share = group.share if group is not None else None
        return dict(share.initialized) if share is not None else {}

    def empty_share_group(self, group_id: str, create: bool) -> tuple[Group, ShareGroup]:
        """The share group, which must have no members (NON_EMPTY_GROUP) for its offsets
        to change; with ``create`` a missing one is made, as Kafka's AlterShareGroupOffsets
        does (GROUP_ID_NOT_FOUND otherwise, or when the id is another kind of group's)."""
        group = self._group(group_id, valid_if_empty=False)
        if group is None and create:
            group = self.catalog.groups[group_id] = Group(group_id, self._now())
            group.share = ShareGroup()
        if group is None or group.share is None:
            raise KafkaError(
                ErrorCode.group_id_not_found, f"Group {group_id} is not a share group."
            )
        if group.share.members:
            raise KafkaError(
                ErrorCode.non_empty_group, f"Share group {group_id} has members: it is not empty."
            )
        return group, group.share

    async def set_share_partitions(self, group_id: str, topics: InitializedTopics) -> None:
        """Record the group's share-partitions as ``topics`` (a topic absent there is
        forgotten), after their state was initialized or deleted."""
        group, share = self.empty_share_group(group_id, create=True)
        share.initialized = dict(topics)
        written = [share_records.group_metadata(group_id, share)]
        written.append(share_records.state_partition_metadata(group_id, share))
        await self.share_protocol.store(group, share, written)

    async def delete_group(self, group_id: str) -> None:
        group = self._existing(group_id, ErrorCode.group_id_not_found, valid_if_empty=True)
        if group.is_(GroupState.DEAD):
            raise KafkaError(ErrorCode.group_id_not_found)
        if not group.is_empty_of_members:
            raise KafkaError(ErrorCode.non_empty_group)
        await self._remove_group(group)

    async def _remove_group(self, group: Group) -> None:
        """Forget the group, then tombstone it and its offsets."""
        records: list[tuple[bytes, bytes | None]] = [
            (encode_key(OffsetKey(group.group_id, topic, partition)), None)
            for topic, partition in group.offsets
        ]
        records.append((encode_key(GroupKey(group.group_id)), None))
        if group.consumer is not None:
            records += consumer_records.group_tombstones(group.group_id, group.consumer)
        if group.share is not None:
            records += share_records.group_tombstones(group.group_id, group.share)
        # Dead before the write, so that no queued group write lands after the tombstones
        group.transition(GroupState.DEAD, self._now())
        self._forget(group, ErrorCode.coordinator_not_available)
        if self.catalog.groups.get(group.group_id) is group:
            del self.catalog.groups[group.group_id]
        await self.catalog.write(group.group_id, records)
        log.info("group %s deleted", group.group_id)

    # --- offset expiry -------------------------------------------------------------------------

    async def _expire_offsets_every(self) -> None:
        while True:
            await asyncio.sleep(self.config.offsets_retention_check_interval_ms / 1000)
            await self.expire_offsets()

    async def expire_offsets(self) -> None:
        """Delete offsets past retention; an empty group left without offsets is removed."""
        now = self._now()
        for group in list(self.catalog.groups.values()):
            expired = expired_offsets(group, now, self.config.offsets_retention_ms)
            try:
                if expired:
                    await self._write_offsets(group, dict.fromkeys(expired))
                    log.info("group %s: %d offsets expired", group.group_id, len(expired))
                # share groups never expire, as in Kafka: they commit no offsets here
                unused = not group.offsets and not group.pending_members and group.share is None
                if group.is_empty_of_members and unused:
                    await self._remove_group(group)
            except KafkaError as error:
                log.warning("group %s: expiring offsets failed: %s", group.group_id, error.message)

    # --- metrics -------------------------------------------------------------------------------

    def lag_samples(self) -> list[tuple[str, str, int, int]]:
        """(group, topic, partition, lag) for committed offsets of partitions with a replica
        here. Only the group's coordinator reports it, so each lag comes from one broker;
        a follower's high watermark trails the leader's by at most one fetch."""
        samples = []
        for group in self.catalog.groups.values():
            for (topic, partition), committed in group.offsets.items():
                try:
                    replica = self._replicas.get(topic, partition)
                except KafkaError:
                    continue
                lag = max(replica.high_watermark - committed.offset, 0)
                samples.append((group.group_id, topic, partition, lag))
        return samples

    # --- helpers -------------------------------------------------------------------------------

    def _group(self, group_id: str, *, valid_if_empty: bool) -> Group | None:
        """The group if this broker coordinates it, None if it has no such group."""
        if not group_id and not valid_if_empty:
            raise KafkaError(ErrorCode.invalid_group_id)
        self.catalog.check_owned(group_id)
        return self.catalog.groups.get(group_id)

    def _existing(self, group_id: str, missing: ErrorCode, *, valid_if_empty: bool) -> Group:
        group = self._group(group_id, valid_if_empty=valid_if_empty)
        if group is None:
            raise KafkaError(missing)
        return group

    def _classic_member_group(self, group_id: str) -> Group:
        """The group of a SyncGroup, Heartbeat or LeaveGroup: a share group is unknown to
        them (UNKNOWN_MEMBER_ID), as in Kafka."""
        group = self._existing(group_id, ErrorCode.unknown_member_id, valid_if_empty=False)
        if group.share is not None:
            raise KafkaError(ErrorCode.unknown_member_id, f"Group {group_id} not found.")
        return group

    async def _persist_group(self, group: Group) -> None:
        # a write queued before the group was deleted or unloaded must not bring it back
        if self.catalog.groups.get(group.group_id) is group:
            await self.catalog.persist_group(group)

    def _now(self) -> int:
        return int(self._clock() * 1000)


def _refuse_share_group(group: Group) -> None:
    """A share group commits and deletes no offsets here (its progress lives in the
    share-group state): GROUP_ID_NOT_FOUND, as Kafka answers."""
    if group.share is not None:
        raise KafkaError(
            ErrorCode.group_id_not_found, f"Group {group.group_id} is not a consumer group."
        )
