"""One member of a group, and the answers its pending JoinGroup and SyncGroup wait for."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from odradek.broker.protocol.errors import ErrorCode


@dataclass(frozen=True)
class JoinedMember:
    """What the leader learns of each member in its JoinGroup response."""

    member_id: str
    group_instance_id: str | None
    metadata: bytes


@dataclass(frozen=True)
class JoinResult:
    error: ErrorCode
    member_id: str
    generation: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader_id: str = ""
    members: tuple[JoinedMember, ...] = ()  # only the leader's result lists them


@dataclass(frozen=True)
class SyncResult:
    error: ErrorCode
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@dataclass
class Member:
    """A member's registration; the waiters and timer belong to the coordinator's event loop."""

    member_id: str
    group_instance_id: str | None
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: tuple[tuple[str, bytes], ...]  # (name, metadata) in the member's preference order
    assignment: bytes = b""
    join_waiter: asyncio.Future[JoinResult] | None = field(default=None, repr=False)
    sync_waiter: asyncio.Future[SyncResult] | None = field(default=None, repr=False)
    session_timer: asyncio.TimerHandle | None = field(default=None, repr=False)

    @property
    def is_static(self) -> bool:
        return self.group_instance_id is not None

    @property
    def protocol_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.protocols)

    @property
    def awaiting_join(self) -> bool:
        return self.join_waiter is not None

    @property
    def awaiting_sync(self) -> bool:
        return self.sync_waiter is not None

    def metadata_for(self, protocol: str) -> bytes:
        for name, metadata in self.protocols:
            if name == protocol:
                return metadata
        raise KeyError(f"member {self.member_id} does not support protocol {protocol}")

    def matches(self, protocols: tuple[tuple[str, bytes], ...]) -> bool:
        return self.protocols == protocols

    def answer_join(self, result: JoinResult) -> None:
        if self.join_waiter is not None:
            if not self.join_waiter.done():
                self.join_waiter.set_result(result)
            self.join_waiter = None

    def answer_sync(self, result: SyncResult) -> None:
        if self.sync_waiter is not None:
            if not self.sync_waiter.done():
                self.sync_waiter.set_result(result)
            self.sync_waiter = None

    def cancel_session_timer(self) -> None:
        if self.session_timer is not None:
            self.session_timer.cancel()
            self.session_timer = None
