"""Share sessions (KIP-932): what a share consumer fetches from this broker.

A ShareFetch with epoch 0 opens a session for the (group, member) with the partitions it
names; each later ShareFetch or ShareAcknowledge carries the session's next epoch (1, 2,
...), may add partitions and forget some; epoch -1 closes it, as does the connection that
opened it closing (as in Kafka). A request with an
unexpected epoch gets INVALID_SHARE_SESSION_EPOCH, one for no session
SHARE_SESSION_NOT_FOUND, and a new session beyond ``group.share.max.share.sessions``
SHARE_SESSION_LIMIT_REACHED.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field

from odradek.broker.protocol.errors import ErrorCode, KafkaError

OPEN_EPOCH = 0
CLOSE_EPOCH = -1
_MAX_EPOCH = 2**31 - 1
TopicIdPartition = tuple[uuid.UUID, int]


@dataclass
class ShareSession:
    group_id: str
    member_id: str
    connection_id: int
    """The connection that opened it: the session ends when that connection closes."""
    epoch: int = 1
    """The epoch the next request must carry."""
    partitions: dict[TopicIdPartition, None] = field(default_factory=dict)
    """In the order they were added (an ordered set)."""

    def update(
        self, added: Iterable[TopicIdPartition], forgotten: Iterable[TopicIdPartition]
    ) -> None:
        for item in added:
            self.partitions.setdefault(item, None)
        for item in forgotten:
            self.partitions.pop(item, None)


class ShareSessions:
    def __init__(self, max_sessions: int) -> None:
        self._max_sessions = max_sessions
        self._sessions: dict[tuple[str, str], ShareSession] = {}

    def __len__(self) -> int:
        return len(self._sessions)

    def open(
        self, group_id: str, member_id: str, connection_id: int
    ) -> tuple[ShareSession, ShareSession | None]:
        """A new session, and the member's previous one it replaces (if any)."""
        key = (group_id, member_id)
        previous = self._sessions.pop(key, None)
        if len(self._sessions) >= self._max_sessions:
            raise KafkaError(
                ErrorCode.share_session_limit_reached,
                f"this broker has group.share.max.share.sessions={self._max_sessions} sessions",
            )
        session = self._sessions[key] = ShareSession(group_id, member_id, connection_id)
        return session, previous

    def advance(self, group_id: str, member_id: str, epoch: int) -> ShareSession:
        """The session a request of ``epoch`` continues, its next epoch counted."""
        session = self._expect(group_id, member_id, epoch)
        session.epoch = 1 if session.epoch == _MAX_EPOCH else session.epoch + 1
        return session

    def close(self, group_id: str, member_id: str) -> ShareSession:
        session = self._sessions.pop((group_id, member_id), None)
        if session is None:
            raise KafkaError(
                ErrorCode.share_session_not_found, f"member {member_id} has no share session"
            )
        return session

    def partitions_in_use(self, group_id: str) -> set[TopicIdPartition]:
        """The partitions some session of the group fetches."""
        return {
            item
            for session in self._sessions.values()
            if session.group_id == group_id
            for item in session.partitions
        }

    def close_connection(self, connection_id: int) -> list[ShareSession]:
        """End the sessions the connection opened; they are returned."""
        ended = [s for s in self._sessions.values() if s.connection_id == connection_id]
        for session in ended:
            del self._sessions[(session.group_id, session.member_id)]
        return ended

    def _expect(self, group_id: str, member_id: str, epoch: int) -> ShareSession:
        session = self._sessions.get((group_id, member_id))
        if session is None:
            raise KafkaError(
                ErrorCode.share_session_not_found, f"member {member_id} has no share session"
            )
        if epoch != session.epoch:
            raise KafkaError(
                ErrorCode.invalid_share_session_epoch,
                f"share session epoch {epoch}, expected {session.epoch}",
            )
        return session
