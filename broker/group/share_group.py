"""A share group (KIP-932): its members, the group epoch, the target assignment and each
member's assignment (no I/O, no timers).

Share groups have no revocation: a partition may be assigned to several members at once,
so a member takes its whole target as soon as it heartbeats (its epoch becomes the target
assignment's).
"""

from __future__ import annotations

import asyncio
import uuid
from dataclasses import dataclass, field
from enum import Enum

from odradek.broker.group.consumer_assignors import TargetAssignment

SHARE_GROUP_TYPE = "share"
SHARE_PROTOCOL_TYPE = "share"  # what ListGroups reports as a share group's protocol type

TopicPartitions = dict[uuid.UUID, frozenset[int]]
InitializedTopics = dict[uuid.UUID, tuple[str, frozenset[int]]]
"""Topic id -> (name, partitions): the share-partitions whose state the group has (Kafka's
ShareGroupStatePartitionMetadata)."""


class ShareGroupState(Enum):
    EMPTY = "Empty"
    STABLE = "Stable"


@dataclass
class ShareMember:
    member_id: str
    rack_id: str | None = None
    client_id: str = ""
    client_host: str = ""
    subscribed_topic_names: tuple[str, ...] = ()  # sorted, no repeats (Kafka keeps a set)
    member_epoch: int = 0
    previous_member_epoch: int = -1
    assigned: TopicPartitions = field(default_factory=dict)
    session_timer: asyncio.TimerHandle | None = field(default=None, repr=False, compare=False)

    def metadata(self) -> tuple[object, ...]:
        """What the member-metadata record holds: a change means a new record."""
        return (self.rack_id, self.client_id, self.client_host, self.subscribed_topic_names)

    def assignment_state(self) -> tuple[object, ...]:
        """What the current-assignment record holds."""
        return (self.member_epoch, self.previous_member_epoch, self.assigned)

    def cancel_session(self) -> None:
        if self.session_timer is not None:
            self.session_timer.cancel()
            self.session_timer = None


@dataclass
class ShareGroup:
    group_epoch: int = 0
    metadata_hash: int = 0  # of the subscribed topics' layout: a change bumps the epoch
    assignment_epoch: int = 0
    target: TargetAssignment = field(default_factory=dict)
    members: dict[str, ShareMember] = field(default_factory=dict)
    initialized: InitializedTopics = field(default_factory=dict)
    """Every partition ever assigned or given a start offset by an admin, until its
    offsets are deleted: what DescribeShareGroupOffsets describes."""

    @property
    def state(self) -> ShareGroupState:
        return ShareGroupState.STABLE if self.members else ShareGroupState.EMPTY

    def remove_member(self, member_id: str) -> None:
        self.members.pop(member_id, None)
        self.target.pop(member_id, None)

    def subscribed_topic_names(self) -> set[str]:
        return {name for member in self.members.values() for name in member.subscribed_topic_names}

    def is_homogeneous(self) -> bool:
        """Every member subscribes to the same topics (Kafka's HOMOGENEOUS subscription type,
        which decides how the simple assignor shares partitions out)."""
        subscriptions = {member.subscribed_topic_names for member in self.members.values()}
        return len(subscriptions) <= 1
