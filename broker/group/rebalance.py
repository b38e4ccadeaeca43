"""JoinGroup, SyncGroup, Heartbeat and LeaveGroup: the classic rebalance protocol.

The delayed operations of Kafka's coordinator become asyncio futures and timers:
a joining member waits on its ``join_waiter`` until the rebalance completes
(everyone rejoined, the initial delay passed, or the rebalance timeout
expired); a follower's SyncGroup waits for the leader's assignment; each
member's session timer evicts it unless it heartbeats.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from odradek.broker.cluster.background_tasks import BackgroundTasks
from odradek.broker.group.group import Group
from odradek.broker.group.group_config import GroupConfig
from odradek.broker.group.group_state import GroupState
from odradek.broker.group.group_timers import GroupTimers
from odradek.broker.group.member import JoinedMember, JoinResult, Member, SyncResult
from odradek.broker.protocol.errors import ErrorCode, KafkaError

log = logging.getLogger(__name__)

PersistGroup = Callable[[Group], Awaitable[None]]
UNKNOWN_MEMBER_ID = ""


@dataclass(frozen=True)
class JoinRequest:
    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: tuple[tuple[str, bytes], ...]
    require_known_member_id: bool  # JoinGroup v4+: a new member first gets MEMBER_ID_REQUIRED


@dataclass(frozen=True)
class SyncRequest:
    member_id: str
    group_instance_id: str | None
    generation: int
    protocol_type: str | None
    protocol_name: str | None
    assignments: dict[str, bytes]


class Rebalancer:
    """Runs the membership protocol of the groups it is handed (all on one event loop)."""

    def __init__(
        self, config: GroupConfig, persist: PersistGroup, clock: Callable[[], float] = time.time
    ) -> None:
        self._config = config
        self._persist = persist
        self._clock = clock
        self._timers = GroupTimers()
        self._initial_delay: set[str] = set()  # groups inside their initial rebalance delay
        self._tasks = BackgroundTasks()
        self.rebalances = 0

    def now_ms(self) -> int:
        return int(self._clock() * 1000)

    # --- JoinGroup -----------------------------------------------------------------------------

    async def join(self, group: Group, request: JoinRequest) -> JoinResult:
        if group.is_(GroupState.DEAD):
            return JoinResult(ErrorCode.coordinator_not_available, request.member_id)
        if not self._config.accepts_session_timeout(request.session_timeout_ms):
            return JoinResult(ErrorCode.invalid_session_timeout, request.member_id)
        names = tuple(name for name, _ in request.protocols)
        if not group.supports(request.protocol_type, names):
            return JoinResult(ErrorCode.inconsistent_group_protocol, request.member_id)
        if request.member_id == UNKNOWN_MEMBER_ID:
            return await self._join_new_member(group, request)
        return await self._join_known_member(group, request)

    async def _join_new_member(self, group: Group, request: JoinRequest) -> JoinResult:
        prefix = request.group_instance_id or request.client_id
        member_id = f"{prefix}-{uuid.uuid4()}"
        old_id = group.static_member_id(request.group_instance_id)
        if old_id is not None:  # a returning static member takes no new place
            return await self._replace_static_member(group, old_id, member_id, request)
        if len(group.members) + len(group.pending_members) >= self._config.max_size:
            return JoinResult(ErrorCode.group_max_size_reached, UNKNOWN_MEMBER_ID)
        if request.require_known_member_id and request.group_instance_id is None:
            group.pending_members.add(member_id)
            self._timers.expire_pending(
                group.group_id,
                member_id,
                request.session_timeout_ms,
                lambda: self._pending_expired(group, member_id),
            )
            return JoinResult(ErrorCode.member_id_required, member_id)
        return await self._add_member_and_rebalance(group, member_id, request)

    async def _join_known_member(self, group: Group, request: JoinRequest) -> JoinResult:
        member_id = request.member_id
        if member_id in group.pending_members:
            self._timers.cancel_pending(group.group_id, member_id)
            return await self._add_member_and_rebalance(group, member_id, request)
        if group.is_fenced(member_id, request.group_instance_id):
            return JoinResult(ErrorCode.fenced_instance_id, member_id)
        member = group.members.get(member_id)
        if member is None or group.state in (GroupState.EMPTY, GroupState.DEAD):
            return JoinResult(ErrorCode.unknown_member_id, member_id)
        unchanged = member.matches(request.protocols)
        if group.is_(GroupState.COMPLETING_REBALANCE) and unchanged:
            return self._current_generation(group, member)
        if group.is_(GroupState.STABLE) and unchanged and group.leader_id != member_id:
            return self._current_generation(group, member)
        return await self._update_member_and_rebalance(group, member, request)

    async def _replace_static_member(
        self, group: Group, old_id: str, new_id: str, request: JoinRequest
    ) -> JoinResult:
        old = group.members[old_id]
        old.answer_join(JoinResult(ErrorCode.fenced_instance_id, old_id))
        old.answer_sync(SyncResult(ErrorCode.fenced_instance_id))
        old.cancel_session_timer()
        leader_before = group.leader_id or ""
        member = group.replace_static_member(old_id, new_id)
        log.info("group %s: static member %s is now %s", group.group_id, old_id, new_id)
        self._update_member(member, request)
        if group.is_(GroupState.STABLE) and group.select_protocol() == group.protocol_name:
            # KIP-345: a static member coming back while the group keeps its protocol gets
            # its old assignment without a rebalance. It is told the old leader id even if
            # it led the group, so that it does not compute an assignment nobody would get.
            self._schedule_session(group, member)
            self.spawn(self._persist_quietly(group))
            return JoinResult(
                ErrorCode.none,
                new_id,
                group.generation,
                group.protocol_type,
                group.protocol_name,
                leader_before,
            )
        return await self._update_member_and_rebalance(group, member, request)

    async def _add_member_and_rebalance(
        self, group: Group, member_id: str, request: JoinRequest
    ) -> JoinResult:
        member = Member(
            member_id,
            request.group_instance_id,
            request.client_id,
            request.client_host,
            request.rebalance_timeout_ms,
            request.session_timeout_ms,
            request.protocol_type,
            request.protocols,
        )
        waiter: asyncio.Future[JoinResult] = asyncio.get_running_loop().create_future()
        member.join_waiter = waiter
        group.add(member)
        self._schedule_session(group, member)
        self._rebalance_or_complete(group, f"member {member_id} joined")
        return await waiter

    async def _update_member_and_rebalance(
        self, group: Group, member: Member, request: JoinRequest
    ) -> JoinResult:
        self._update_member(member, request)
        member.answer_join(JoinResult(ErrorCode.rebalance_in_progress, member.member_id))
        waiter: asyncio.Future[JoinResult] = asyncio.get_running_loop().create_future()
        member.join_waiter = waiter
        self._rebalance_or_complete(group, f"member {member.member_id} rejoined")
        return await waiter

    @staticmethod
    def _update_member(member: Member, request: JoinRequest) -> None:
        member.protocols = request.protocols
        member.client_id = request.client_id
        member.client_host = request.client_host
        member.session_timeout_ms = request.session_timeout_ms
        member.rebalance_timeout_ms = request.rebalance_timeout_ms

    def _current_generation(self, group: Group, member: Member) -> JoinResult:
        self._schedule_session(group, member)
        return self._join_result(group, member)

    @staticmethod
    def _join_result(group: Group, member: Member) -> JoinResult:
        protocol = group.protocol_name
        assert protocol is not None
        members = (
            tuple(
                JoinedMember(m.member_id, m.group_instance_id, m.metadata_for(protocol))
                for m in group.members.values()
            )
            if member.member_id == group.leader_id
            else ()
        )
        return JoinResult(
            ErrorCode.none,
            member.member_id,
            group.generation,
            group.protocol_type,
            protocol,
            group.leader_id or "",
            members,
        )

    # --- rebalance life cycle ------------------------------------------------------------------

    def _rebalance_or_complete(self, group: Group, reason: str) -> None:
        if group.is_(GroupState.PREPARING_REBALANCE):
            self._maybe_complete_join(group)
        else:
            self.prepare_rebalance(group, reason)

    def prepare_rebalance(self, group: Group, reason: str) -> None:
        if group.is_(GroupState.COMPLETING_REBALANCE):
            self._reset_assignments(group, ErrorCode.rebalance_in_progress)
        self._timers.cancel_deadline(group.group_id)
        initial = group.is_(GroupState.EMPTY)
        group.transition(GroupState.PREPARING_REBALANCE, self.now_ms())
        self.rebalances += 1
        log.info(
            "group %s: preparing to rebalance generation %d (%s)",
            group.group_id,
            group.generation,
            reason,
        )
        if initial:
            # KIP-134: wait a little for the rest of a starting group before assigning
            group.new_member_added = False
            self._initial_delay.add(group.group_id)
            delay = self._config.initial_rebalance_delay_ms
            remaining = max(group.max_rebalance_timeout_ms() - delay, 0)
            self._timers.set_deadline(
                group.group_id, delay, self._initial_delay_expired, group, delay, remaining
            )
        else:
            self._timers.set_deadline(
                group.group_id, group.max_rebalance_timeout_ms(), self._complete_join, group
            )
            self._maybe_complete_join(group)

    def _initial_delay_expired(self, group: Group, delay: int, remaining: int) -> None:
        if group.new_member_added and remaining > 0:
            group.new_member_added = False
            step = min(delay, remaining)
            self._timers.set_deadline(
                group.group_id, step, self._initial_delay_expired, group, delay, remaining - step
            )
            return
        self._initial_delay.discard(group.group_id)
        self._complete_join(group)

    def _maybe_complete_join(self, group: Group) -> None:
        if (
            group.is_(GroupState.PREPARING_REBALANCE)
            and group.group_id not in self._initial_delay
            and group.has_all_members_joined()
        ):
            self._complete_join(group)

    def _complete_join(self, group: Group) -> None:
        self._timers.cancel_deadline(group.group_id)
        if not group.is_(GroupState.PREPARING_REBALANCE):
            return
        for member in group.not_yet_rejoined():
            if not member.is_static:  # a static member keeps its place until its session ends
                log.info("group %s: member %s did not rejoin in time", group.group_id, member)
                member.cancel_session_timer()
                group.remove(member.member_id)
        group.generation += 1
        if group.is_empty:
            group.protocol_name = None
            group.transition(GroupState.EMPTY, self.now_ms())
            log.info("group %s: empty at generation %d", group.group_id, group.generation)
            self.spawn(self._persist_quietly(group))
            return
        group.protocol_name = group.select_protocol()
        group.transition(GroupState.COMPLETING_REBALANCE, self.now_ms())
        log.info(
            "group %s: generation %d with %d members, protocol %s",
            group.group_id,
            group.generation,
            len(group.members),
            group.protocol_name,
        )
        for member in group.members.values():
            member.answer_join(self._join_result(group, member))
            self._schedule_session(group, member)
        self._timers.set_deadline(
            group.group_id,
            group.max_rebalance_timeout_ms(),
            self._sync_expired,
            group,
            group.generation,
        )

    def _sync_expired(self, group: Group, generation: int) -> None:
        """The leader's assignment did not arrive within the rebalance timeout."""
        if not group.is_(GroupState.COMPLETING_REBALANCE) or group.generation != generation:
            return
        for member in list(group.members.values()):
            if not member.awaiting_sync:
                log.info("group %s: member %s did not sync in time", group.group_id, member)
                member.cancel_session_timer()
                group.remove(member.member_id)
        self.prepare_rebalance(group, "members did not sync in time")

    def _reset_assignments(self, group: Group, error: ErrorCode) -> None:
        for member in group.members.values():
            member.assignment = b""
            member.answer_sync(SyncResult(error))

    # --- SyncGroup -----------------------------------------------------------------------------

    async def sync(self, group: Group, request: SyncRequest) -> SyncResult:
        member = self._check_member(group, request.member_id, request.group_instance_id)
        if request.generation != group.generation:
            raise KafkaError(ErrorCode.illegal_generation)
        if (request.protocol_type not in (None, group.protocol_type)) or (
            request.protocol_name not in (None, group.protocol_name)
        ):
            raise KafkaError(ErrorCode.inconsistent_group_protocol)
        if group.is_(GroupState.PREPARING_REBALANCE):
            raise KafkaError(ErrorCode.rebalance_in_progress)
        self._schedule_session(group, member)
        if group.is_(GroupState.STABLE):
            return SyncResult(
                ErrorCode.none, group.protocol_type, group.protocol_name, member.assignment
            )
        member.answer_sync(SyncResult(ErrorCode.rebalance_in_progress))
        waiter: asyncio.Future[SyncResult] = asyncio.get_running_loop().create_future()
        member.sync_waiter = waiter
        if member.member_id == group.leader_id:
            self.spawn(self._complete_sync(group, request.assignments))
        return await waiter

    async def _complete_sync(self, group: Group, assignments: dict[str, bytes]) -> None:
        generation = group.generation
        for member in group.members.values():
            member.assignment = assignments.get(member.member_id, b"")
        try:
            await self._persist(group)
        except KafkaError as error:
            if group.is_(GroupState.COMPLETING_REBALANCE) and group.generation == generation:
                self._reset_assignments(group, error.code)
                self.prepare_rebalance(group, f"storing the assignment failed: {error.message}")
            return
        if not group.is_(GroupState.COMPLETING_REBALANCE) or group.generation != generation:
            return
        self._timers.cancel_deadline(group.group_id)
        group.transition(GroupState.STABLE, self.now_ms())
        log.info("group %s: stable at generation %d", group.group_id, generation)
        for member in group.members.values():
            member.answer_sync(
                SyncResult(
                    ErrorCode.none, group.protocol_type, group.protocol_name, member.assignment
                )
            )

    # --- Heartbeat and LeaveGroup --------------------------------------------------------------

    def heartbeat(
        self, group: Group, member_id: str, group_instance_id: str | None, generation: int
    ) -> None:
        member = self._check_member(group, member_id, group_instance_id)
        if generation != group.generation:
            raise KafkaError(ErrorCode.illegal_generation)
        self._schedule_session(group, member)
        if group.is_(GroupState.PREPARING_REBALANCE):
            raise KafkaError(ErrorCode.rebalance_in_progress)

    def _check_member(self, group: Group, member_id: str, group_instance_id: str | None) -> Member:
        """The member, or the error Kafka gives before looking at generations."""
        if group.is_(GroupState.DEAD):
            raise KafkaError(ErrorCode.coordinator_not_available)
        if group.is_fenced(member_id, group_instance_id):
            raise KafkaError(ErrorCode.fenced_instance_id)
        member = group.members.get(member_id)
        if member is None or group.is_(GroupState.EMPTY):
            raise KafkaError(ErrorCode.unknown_member_id)
        return member

    def leave(self, group: Group, leaving: list[tuple[str, str | None]]) -> list[ErrorCode]:
        """Remove each (member id, instance id); one error code per entry (batch leave, v3+)."""
        if group.is_(GroupState.DEAD):
            raise KafkaError(ErrorCode.coordinator_not_available)
        return [self._leave_one(group, member_id, instance) for member_id, instance in leaving]

    def _leave_one(self, group: Group, member_id: str, group_instance_id: str | None) -> ErrorCode:
        if group_instance_id is not None:
            known = group.static_member_id(group_instance_id)
            if known is None:
                return ErrorCode.unknown_member_id
            if member_id != UNKNOWN_MEMBER_ID and member_id != known:
                return ErrorCode.fenced_instance_id
            member_id = known
        elif member_id in group.pending_members:
            group.pending_members.discard(member_id)
            self._maybe_complete_join(group)
            return ErrorCode.none
        member = group.members.get(member_id)
        if member is None:
            return ErrorCode.unknown_member_id
        log.info("group %s: member %s left", group.group_id, member_id)
        self.remove_member(group, member, ErrorCode.unknown_member_id)
        return ErrorCode.none

    def remove_member(self, group: Group, member: Member, error: ErrorCode) -> None:
        member.cancel_session_timer()
        member.answer_join(JoinResult(error, member.member_id))
        member.answer_sync(SyncResult(error))
        group.remove(member.member_id)
        if group.state in (GroupState.STABLE, GroupState.COMPLETING_REBALANCE):
            self.prepare_rebalance(group, f"member {member.member_id} left")
        elif group.is_(GroupState.PREPARING_REBALANCE):
            self._maybe_complete_join(group)

    # --- timers --------------------------------------------------------------------------------

    def keep_alive(self, group: Group, member: Member) -> None:
        """Restart the member's session, as a heartbeat does."""
        self._schedule_session(group, member)

    def _schedule_session(self, group: Group, member: Member) -> None:
        member.cancel_session_timer()
        member.session_timer = asyncio.get_running_loop().call_later(
            member.session_timeout_ms / 1000, self._session_expired, group, member
        )

    def start_sessions(self, group: Group) -> None:
        """Give every member of a group just loaded from the log a fresh session."""
        for member in group.members.values():
            self._schedule_session(group, member)

    def _session_expired(self, group: Group, member: Member) -> None:
        if group.members.get(member.member_id) is not member:
            return
        if member.awaiting_join or member.awaiting_sync:
            # the rebalance timeout bounds a member that waits on the coordinator
            self._schedule_session(group, member)
            return
        log.info("group %s: session of member %s expired", group.group_id, member.member_id)
        self.remove_member(group, member, ErrorCode.unknown_member_id)

    def _pending_expired(self, group: Group, member_id: str) -> None:
        """A member id handed out with MEMBER_ID_REQUIRED was not used in time."""
        if member_id in group.pending_members:
            group.pending_members.discard(member_id)
            self._maybe_complete_join(group)

    def forget(self, group: Group, error: ErrorCode) -> None:
        """Stop serving a group (unloaded or deleted): answer its waiters, cancel its timers."""
        self._timers.forget(group.group_id)
        self._initial_delay.discard(group.group_id)
        for member in group.members.values():
            member.cancel_session_timer()
            member.answer_join(JoinResult(error, member.member_id))
            member.answer_sync(SyncResult(error))

    # --- background work -----------------------------------------------------------------------

    async def _persist_quietly(self, group: Group) -> None:
        try:
            await self._persist(group)
        except KafkaError as error:
            log.warning("group %s: could not store the group: %s", group.group_id, error.message)

    def spawn(self, work: Coroutine[Any, Any, None]) -> None:
        self._tasks.spawn(work)

    async def close(self) -> None:
        await self._tasks.cancel_all()
