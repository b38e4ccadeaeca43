"""A follower's side of an incremental fetch session (KIP-227), as Kafka's
FetchSessionHandler: which partitions each Fetch to one leader carries.

The first fetch lists every partition followed (epoch 0) and the leader opens a session;
later ones carry only the partitions whose position (fetch offset, log start offset,
leader epoch) changed since the session last heard of them, and forget those no longer
followed. An error, a closed session or a lost connection starts again with a full fetch,
closing the old session.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass

from odradek.broker.cluster.partition import PartitionKey
from odradek.broker.protocol.errors import ErrorCode

log = logging.getLogger(__name__)

INITIAL_EPOCH = 0
SESSIONLESS = 0
MAX_EPOCH = 2**31 - 1

Position = tuple[int, int, int]
"""What a fetch tells the leader of a partition: fetch offset, log start offset, leader epoch."""


@dataclass(frozen=True)
class NextFetch:
    session_id: int
    epoch: int
    sent: Mapping[PartitionKey, Position]
    """The partitions this fetch carries."""
    forgotten: tuple[PartitionKey, ...]
    wanted: Mapping[PartitionKey, Position]
    """Every partition followed: what the session holds once this fetch is answered."""


class FetchSessionHandler:
    """The session with one leader: its id, the epoch of the next fetch, and the positions
    the leader holds for it."""

    def __init__(self, leader: int) -> None:
        self._leader = leader
        self._id = SESSIONLESS
        self._epoch = INITIAL_EPOCH
        self._held: Mapping[PartitionKey, Position] = {}

    def next(self, wanted: Mapping[PartitionKey, Position]) -> NextFetch:
        if self._epoch == INITIAL_EPOCH:
            return NextFetch(self._id, INITIAL_EPOCH, wanted, (), wanted)
        held = self._held
        sent = {key: position for key, position in wanted.items() if held.get(key) != position}
        forgotten = tuple(key for key in held if key not in wanted)
        return NextFetch(self._id, self._epoch, sent, forgotten, wanted)

    def answered(self, fetch: NextFetch, error: ErrorCode, session_id: int) -> None:
        """The leader answered ``fetch`` with this top-level error and session id."""
        if error is not ErrorCode.none:
            log.debug(
                "fetch session %d with broker %d: %s; starting again",
                fetch.session_id,
                self._leader,
                error.name,
            )
            if error is ErrorCode.fetch_session_id_not_found:
                self._id = SESSIONLESS
            self._epoch = INITIAL_EPOCH
        elif session_id == SESSIONLESS:  # none opened, or the leader closed it
            self._id, self._epoch, self._held = SESSIONLESS, INITIAL_EPOCH, {}
        else:
            if fetch.epoch == INITIAL_EPOCH:
                log.debug("fetch session %d with broker %d opened", session_id, self._leader)
            self._id, self._held = session_id, fetch.wanted
            self._epoch = 1 if fetch.epoch == MAX_EPOCH else fetch.epoch + 1

    def failed(self) -> None:
        """The fetch went unanswered: the next one is full and closes the session."""
        self._epoch = INITIAL_EPOCH
