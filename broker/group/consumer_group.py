"""The KIP-848 side of a group: members, the group epoch, the target assignment and which
member owns each partition now (no I/O, no timers)."""

from __future__ import annotations

import uuid
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum

from odradek.broker.group.consumer_assignors import TargetAssignment
from odradek.broker.group.consumer_member import ConsumerMember
from odradek.broker.group.subscription_regex import matches

CONSUMER_GROUP_TYPE = "consumer"


class ConsumerGroupState(Enum):
    EMPTY = "Empty"
    ASSIGNING = "Assigning"  # the group epoch moved past the target assignment's
    RECONCILING = "Reconciling"  # some member has not reached the target yet
    STABLE = "Stable"


@dataclass
class ConsumerGroup:
    group_epoch: int = 0
    metadata_hash: int = 0  # of the subscribed topics' layout: a change bumps the epoch
    assignment_epoch: int = 0
    target: TargetAssignment = field(default_factory=dict)
    members: dict[str, ConsumerMember] = field(default_factory=dict)
    static_members: dict[str, str] = field(default_factory=dict)  # instance id -> member id
    # (topic id, partition) -> (member id, epoch) of the member assigned or revoking it
    _owners: dict[tuple[uuid.UUID, int], tuple[str, int]] = field(default_factory=dict)

    @property
    def state(self) -> ConsumerGroupState:
        if not self.members:
            return ConsumerGroupState.EMPTY
        if self.group_epoch != self.assignment_epoch:
            return ConsumerGroupState.ASSIGNING
        if any(
            m.member_epoch != self.assignment_epoch or m.state.value != 0
            for m in self.members.values()
        ):
            return ConsumerGroupState.RECONCILING
        return ConsumerGroupState.STABLE

    def owner_epoch(self, topic_id: uuid.UUID, partition: int) -> int:
        owner = self._owners.get((topic_id, partition))
        return owner[1] if owner is not None else -1

    def put_member(self, member: ConsumerMember) -> None:
        """Add or replace a member, keeping partition ownership current."""
        self._release(member.member_id)
        self.members[member.member_id] = member
        if member.instance_id is not None:
            self.static_members[member.instance_id] = member.member_id
        for assignment in (member.assigned, member.pending_revocation):
            for topic, partitions in assignment.items():
                for partition in partitions:
                    self._owners[(topic, partition)] = (member.member_id, member.member_epoch)

    def remove_member(self, member_id: str) -> ConsumerMember | None:
        self._release(member_id)
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        self.target.pop(member_id, None)
        if member.instance_id is not None and self.static_members.get(member.instance_id) == (
            member_id
        ):
            del self.static_members[member.instance_id]
        return member

    def _release(self, member_id: str) -> None:
        previous = self.members.get(member_id)
        if previous is None:
            return
        for assignment in (previous.assigned, previous.pending_revocation):
            for topic, partitions in assignment.items():
                for partition in partitions:
                    if self._owners.get((topic, partition), ("",))[0] == member_id:
                        del self._owners[(topic, partition)]

    def subscribes_to(self, topic: str) -> bool:
        """Whether some member subscribes to the topic, by name or by regex."""
        return any(
            topic in m.subscribed_topic_names
            or (m.subscribed_topic_regex and matches(m.subscribed_topic_regex, topic))
            for m in self.members.values()
        )

    def preferred_assignor(self, default: str) -> str:
        """The server assignor most members ask for (ties: by name), else the default."""
        votes = Counter(m.server_assignor for m in self.members.values() if m.server_assignor)
        if not votes:
            return default
        return min(votes, key=lambda name: (-votes[name], name))
