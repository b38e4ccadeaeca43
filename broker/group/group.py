"""A group's membership, generation, chosen protocol and committed offsets (no I/O, no timers)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from odradek.broker.group.consumer_group import CONSUMER_GROUP_TYPE, ConsumerGroup
from odradek.broker.group.consumer_protocol import CONSUMER_PROTOCOL_TYPE, subscribed_topics
from odradek.broker.group.group_state import GroupState, IllegalStateTransition
from odradek.broker.group.member import Member
from odradek.broker.group.record_format import CommittedOffset, StoredGroup, StoredMember
from odradek.broker.group.share_group import SHARE_GROUP_TYPE, SHARE_PROTOCOL_TYPE, ShareGroup

TopicPartition = tuple[str, int]
CLASSIC_GROUP_TYPE = "classic"


@dataclass
class Group:
    group_id: str
    state_timestamp: int = -1  # ms since the epoch of the last transition
    state: GroupState = GroupState.EMPTY
    protocol_type: str | None = None
    protocol_name: str | None = None
    generation: int = 0
    leader_id: str | None = None
    members: dict[str, Member] = field(default_factory=dict)  # in joining order
    pending_members: set[str] = field(default_factory=set)  # got MEMBER_ID_REQUIRED, not back yet
    static_members: dict[str, str] = field(default_factory=dict)  # instance id -> member id
    offsets: dict[TopicPartition, CommittedOffset] = field(default_factory=dict)
    # TxnOffsetCommit's offsets by producer id, until its transaction commits or aborts
    transactional_offsets: dict[int, dict[TopicPartition, CommittedOffset]] = field(
        default_factory=dict
    )
    new_member_added: bool = False  # stretches the initial rebalance delay
    # set while the group runs the KIP-848 consumer protocol (its membership lives there)
    consumer: ConsumerGroup | None = None
    # set for a share group (KIP-932), which never changes type while it exists
    share: ShareGroup | None = None

    def is_(self, state: GroupState) -> bool:
        return self.state is state

    @property
    def is_empty(self) -> bool:
        modern = self.consumer or self.share
        return not self.members and not (modern is not None and modern.members)

    @property
    def group_type(self) -> str:
        """ListGroups' type: ``consumer`` for KIP-848 groups, ``share`` for share groups,
        else ``classic``."""
        if self.share is not None:
            return SHARE_GROUP_TYPE
        return CONSUMER_GROUP_TYPE if self.consumer is not None else CLASSIC_GROUP_TYPE

    @property
    def listed_protocol_type(self) -> str:
        """ListGroups' protocol type: ``consumer`` for KIP-848 groups, ``share`` for share
        groups, else the classic members' (empty when none chose one)."""
        if self.share is not None:
            return SHARE_PROTOCOL_TYPE
        return CONSUMER_PROTOCOL_TYPE if self.consumer is not None else self.protocol_type or ""

    @property
    def state_name(self) -> str:
        """The state as Kafka's tools print it (a consumer or share group's own states)."""
        modern = self.consumer or self.share
        return modern.state.value if modern is not None else self.state.value

    @property
    def is_empty_of_members(self) -> bool:
        """No member of either protocol: the group may be deleted or expire."""
        return self.is_(GroupState.EMPTY) and self.is_empty

    def transition(self, state: GroupState, now_ms: int) -> None:
        if not state.can_follow(self.state):
            raise IllegalStateTransition(
                f"group {self.group_id}: {self.state.value} -> {state.value}"
            )
        self.state = state
        self.state_timestamp = now_ms

    # --- membership ----------------------------------------------------------------------------

    def add(self, member: Member) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        self.members[member.member_id] = member
        self.pending_members.discard(member.member_id)
        if member.group_instance_id is not None:
            self.static_members[member.group_instance_id] = member.member_id
        if self.leader_id is None:
            self.leader_id = member.member_id
        if self.is_(GroupState.PREPARING_REBALANCE):
            self.new_member_added = True

    def remove(self, member_id: str) -> Member | None:
        member = self.members.pop(member_id, None)
        if member is None:
            return None
        instance = member.group_instance_id
        if instance is not None and self.static_members.get(instance) == member_id:
            del self.static_members[instance]
        if self.leader_id == member_id:
            self.leader_id = next(iter(self.members), None)
        return member

    def replace_static_member(self, old_id: str, new_id: str) -> Member:
        """Give a static member a new member id, keeping its place and assignment."""
        member = self.members[old_id]
        member.member_id = new_id
        self.members = {
            (new_id if key == old_id else key): value for key, value in self.members.items()
        }
        assert member.group_instance_id is not None
        self.static_members[member.group_instance_id] = new_id
        if self.leader_id == old_id:
            self.leader_id = new_id
        return member

    def static_member_id(self, group_instance_id: str | None) -> str | None:
        if group_instance_id is None:
            return None
        return self.static_members.get(group_instance_id)

    def is_fenced(self, member_id: str, group_instance_id: str | None) -> bool:
        """A static instance is known under another member id: the caller is a zombie."""
        known = self.static_member_id(group_instance_id)
        return known is not None and known != member_id

    def has_all_members_joined(self) -> bool:
        return not self.pending_members and all(m.awaiting_join for m in self.members.values())

    def not_yet_rejoined(self) -> list[Member]:
        return [member for member in self.members.values() if not member.awaiting_join]

    def max_rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    # --- protocols -----------------------------------------------------------------------------

    def supports(self, protocol_type: str, protocol_names: tuple[str, ...]) -> bool:
        """Whether a member with these protocols may join (Kafka's supportsProtocols)."""
        if not protocol_type or not protocol_names:
            return False
        if not self.members:
            return True
        return protocol_type == self.protocol_type and bool(
            self.candidate_protocols() & set(protocol_names)
        )

    def candidate_protocols(self) -> set[str]:
        names = [set(m.protocol_names) for m in self.members.values()]
        return set.intersection(*names) if names else set()

    def select_protocol(self) -> str:
        """The protocol every member supports that most members prefer (Kafka's vote)."""
        candidates = self.candidate_protocols()
        if not candidates:
            raise ValueError(f"group {self.group_id}: no protocol that every member supports")
        votes: Counter[str] = Counter()
        for member in self.members.values():
            votes[next(name for name in member.protocol_names if name in candidates)] += 1
        leader = self.members.get(self.leader_id or "")
        order = leader.protocol_names if leader else tuple(sorted(candidates))
        # ties go to the leader's preference, so the choice does not depend on dict order
        return max(votes, key=lambda name: (votes[name], -order.index(name)))

    def subscribed_topics(self) -> frozenset[str] | None:
        """Topics the members subscribe to, if this is a consumer group using one protocol."""
        if self.protocol_type != CONSUMER_PROTOCOL_TYPE or self.protocol_name is None:
            return None
        topics: set[str] = set()
        for member in self.members.values():
            metadata = dict(member.protocols).get(self.protocol_name)
            found = subscribed_topics(metadata) if metadata is not None else None
            if found is None:
                return None
            topics |= found
        return frozenset(topics)

    # --- persistence ---------------------------------------------------------------------------

    def stored(self) -> StoredGroup:
        protocol = self.protocol_name
        return StoredGroup(
            self.protocol_type,
            self.generation,
            protocol,
            self.leader_id,
            self.state_timestamp,
            tuple(
                StoredMember(
                    m.member_id,
                    m.group_instance_id,
                    m.client_id,
                    m.client_host,
                    m.rebalance_timeout_ms,
                    m.session_timeout_ms,
                    m.metadata_for(protocol) if protocol else b"",
                    m.assignment,
                )
                for m in self.members.values()
            ),
        )

    @classmethod
    def restored(cls, group_id: str, stored: StoredGroup) -> Group:
        """The group as a new coordinator finds it: Stable if it had members, else Empty."""
        group = cls(
            group_id,
            stored.state_timestamp,
            GroupState.STABLE if stored.members else GroupState.EMPTY,
            stored.protocol_type,
            stored.protocol_name,
            stored.generation,
            stored.leader_id,
        )
        for item in stored.members:
            protocols = ((stored.protocol_name, item.subscription),) if stored.protocol_name else ()
            group.members[item.member_id] = Member(
                item.member_id,
                item.group_instance_id,
                item.client_id,
                item.client_host,
                item.rebalance_timeout_ms,
                item.session_timeout_ms,
                stored.protocol_type or "",
                protocols,
                item.assignment,
            )
            if item.group_instance_id is not None:
                group.static_members[item.group_instance_id] = item.member_id
        return group
