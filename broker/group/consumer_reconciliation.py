"""How a member's assignment moves towards its target (Kafka's CurrentAssignmentBuilder).

A member first gives up (revokes) the partitions its target no longer holds, keeping its
epoch; once it reports them gone it moves to the target epoch and gets the partitions that
are free, waiting (UNRELEASED_PARTITIONS) for those another member still has to revoke.
So no partition is ever owned by two members at once.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Collection, Mapping

from odradek.broker.group.consumer_member import Assignment, ConsumerMember, MemberState

# the epoch of the member owning a partition (assigned or pending revocation), -1 if free
OwnerEpoch = Callable[[uuid.UUID, int], int]
# what a heartbeat says the member owns (None: the heartbeat did not say)
Owned = Mapping[uuid.UUID, Collection[int]] | None


@dataclasses.dataclass(frozen=True)
class Reconciliation:
    target_epoch: int
    target: Mapping[uuid.UUID, frozenset[int]]
    subscribed: frozenset[uuid.UUID]
    owner_epoch: OwnerEpoch
    owned: Owned
    subscription_changed: bool = False

    def next(self, member: ConsumerMember) -> ConsumerMember:
        """The member after this heartbeat (itself when nothing changes)."""
        if member.state is MemberState.STABLE:
            if member.member_epoch != self.target_epoch:
                return self._next_assignment(member)
            if self.subscription_changed:
                return self._drop_unsubscribed(member)
            return member
        if member.state is MemberState.UNREVOKED_PARTITIONS and self._owns_any(
            member.pending_revocation
        ):
            return self._drop_unsubscribed(member) if self.subscription_changed else member
        return self._next_assignment(member)

    def _owns_any(self, partitions: Assignment) -> bool:
        if self.owned is None:
            return True
        return any(
            partition in partitions.get(topic, {})
            for topic, owned in self.owned.items()
            for partition in owned
        )

    def _drop_unsubscribed(self, member: ConsumerMember) -> ConsumerMember:
        """Revoke at once the partitions of topics the member no longer subscribes to."""
        dropped = {t: p for t, p in member.assigned.items() if t not in self.subscribed}
        if not dropped:
            return member
        assigned = {t: p for t, p in member.assigned.items() if t in self.subscribed}
        pending = {t: dict(p) for t, p in member.pending_revocation.items()}
        for topic, partitions in dropped.items():
            pending.setdefault(topic, {}).update(partitions)
        if self._owns_any(pending):
            return dataclasses.replace(
                member,
                state=MemberState.UNREVOKED_PARTITIONS,
                assigned=assigned,
                pending_revocation=pending,
            )
        return dataclasses.replace(member, assigned=assigned)

    def _next_assignment(self, member: ConsumerMember) -> ConsumerMember:
        assigned: Assignment = {}
        revoking: Assignment = {}
        to_assign: dict[uuid.UUID, set[int]] = {}
        unreleased = False
        for topic in self.target.keys() | member.assigned.keys():
            target = (
                self.target.get(topic, frozenset()) if topic in self.subscribed else frozenset()
            )
            current = member.assigned.get(topic, {})
            kept = {p: epoch for p, epoch in current.items() if p in target}
            gone = {p: epoch for p, epoch in current.items() if p not in target}
            own_revoking = member.pending_revocation.get(topic, {})
            wanted = set()
            for partition in target - kept.keys():
                if self.owner_epoch(topic, partition) != -1 and partition not in own_revoking:
                    unreleased = True
                else:
                    wanted.add(partition)
            if kept:
                assigned[topic] = kept
            if gone:
                revoking[topic] = gone
            if wanted:
                to_assign[topic] = wanted
        if revoking and self._owns_any(revoking):
            return dataclasses.replace(
                member,
                state=MemberState.UNREVOKED_PARTITIONS,
                assigned=assigned,
                pending_revocation=revoking,
            )
        for topic, partitions in to_assign.items():
            assigned.setdefault(topic, {}).update(dict.fromkeys(partitions, self.target_epoch))
        return dataclasses.replace(
            member,
            state=MemberState.UNRELEASED_PARTITIONS if unreleased else MemberState.STABLE,
            previous_member_epoch=member.member_epoch
            if member.member_epoch != self.target_epoch
            else member.previous_member_epoch,
            member_epoch=self.target_epoch,
            assigned=assigned,
            pending_revocation={},
        )
