"""A member of a consumer group on the KIP-848 protocol: its subscription and its
assignment as the coordinator reconciles it (no I/O, no timers)."""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from enum import IntEnum

# topic id -> partition -> the member epoch at which the partition was assigned (KIP-1251)
Assignment = dict[uuid.UUID, dict[int, int]]


class MemberState(IntEnum):
    """Kafka's MemberState (its byte values are what the records store)."""

    STABLE = 0
    UNREVOKED_PARTITIONS = 1  # must give up partitions before it moves to the target epoch
    UNRELEASED_PARTITIONS = 2  # at the target epoch, waiting for partitions others still own


@dataclass(frozen=True)
class ClassicMembership:
    """A member of a consumer group that speaks the classic protocol (JoinGroup, SyncGroup,
    Heartbeat): its session timeout and the protocols it offered (name, metadata)."""

    session_timeout_ms: int
    protocols: tuple[tuple[str, bytes], ...]

    @property
    def protocol_name(self) -> str:
        return self.protocols[0][0]


@dataclass
class ConsumerMember:
    member_id: str
    instance_id: str | None = None
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()
    subscribed_topic_regex: str | None = None
    rebalance_timeout_ms: int = -1
    server_assignor: str | None = None
    member_epoch: int = 0
    previous_member_epoch: int = 0
    state: MemberState = MemberState.STABLE
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)
    classic: ClassicMembership | None = None  # set for a classic member (upgrade/downgrade)
    session_timer: asyncio.TimerHandle | None = field(default=None, repr=False, compare=False)
    revocation_timer: asyncio.TimerHandle | None = field(default=None, repr=False, compare=False)

    def metadata(self) -> tuple[object, ...]:
        """What the member-metadata record holds: a change means a new record."""
        return (
            self.instance_id,
            self.rack_id,
            self.client_id,
            self.client_host,
            self.subscribed_topic_names,
            self.subscribed_topic_regex,
            self.rebalance_timeout_ms,
            self.server_assignor,
            self.classic,
        )

    def assignment_state(self) -> tuple[object, ...]:
        """What the current-assignment record holds."""
        return (
            self.member_epoch,
            self.previous_member_epoch,
            self.state,
            self.assigned,
            self.pending_revocation,
        )

    def assignment_epoch(self, topic_id: uuid.UUID, partition: int) -> int | None:
        """The epoch the partition was given to this member at, if it has or is revoking it."""
        epoch = self.assigned.get(topic_id, {}).get(partition)
        if epoch is None:
            epoch = self.pending_revocation.get(topic_id, {}).get(partition)
        return epoch

    def cancel_timers(self) -> None:
        for timer in (self.session_timer, self.revocation_timer):
            if timer is not None:
                timer.cancel()
        self.session_timer = self.revocation_timer = None


def partitions_of(assignment: Assignment) -> dict[uuid.UUID, frozenset[int]]:
    return {topic: frozenset(parts) for topic, parts in assignment.items() if parts}
