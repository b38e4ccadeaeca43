"""Incremental fetch sessions (KIP-227): a fetcher lists its partitions once, then each
Fetch carries only the partitions whose position changed, and each answer only the
partitions with news.

Fetch v7+ says what it wants with (session id, epoch): epoch -1 is a fetch outside any
session (closing the session named, if any); epoch 0 a full fetch that opens a session,
closing the one named; epoch n > 0 the n-th fetch of session ``id``, which updates the
session's partitions (and drops its forgotten ones) and reads all of them. The cache holds
``max.incremental.fetch.session.cache.slots`` sessions; a full cache makes room as Kafka's
FetchSessionCache does: a session unused for two minutes goes first, else the least
valuable session the newcomer may evict (a follower's outranks a consumer's, a bigger one
a smaller; a consumer's may evict only sessions over two minutes old), else the fetch runs
without a session. An incremental answer lists a partition when it carries records or an
error, or its high watermark or log start offset changed since the session last told them,
or it names a preferred read replica; partitions that sent records move to the back of the
session, so no partition takes every answer's byte budget. A partition whose last answer
left nothing to send rests: the session's fetches pass it by, without reading or even
visiting it, until the replica tells it of a change (``Partition.watch_quiet``: records, a
high watermark, a state, a fence, a log start) or its fetcher asks for it anew. Most of a
follower's or a consumer's partitions are idle most of the time, and a follower's Fetch
would otherwise read every partition it follows to find one with records. Every
``sweep_s`` a session's fetch reads all its partitions again: what no replica reports
(retention moving a log start, an offline log directory) shows within it, and a leader
sees its resting followers fetch (the ISR's caught-up clock), so ``sweep_s`` stays well
under ``replica.lag.time.max.ms``.
"""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from odradek.broker.cluster.partition import Partition
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.fetch_response import TOPIC_IDS_FROM, FetchedPartition, FetchedTopic

SESSIONS_FROM = 7
FINAL_EPOCH = -1
INITIAL_EPOCH = 0
SESSIONLESS = 0
"""The session id of a fetch outside any session."""
EVICTABLE_AFTER_S = 120.0
"""Kafka's MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS: sessions younger than this (or used
more recently, for the unused-session rule) are safe from a consumer's new session."""

T = TypeVar("T")
TopicKey = str | uuid.UUID
"""A session's topics go by name before Fetch v13 and by id from it."""


@dataclass(eq=False)
class SessionPartition:
    """One partition of a session: the fetch last asked for it (read like a request's
    partition) and the offsets last answered (-1: none yet, or an error since)."""

    session: FetchSession = field(repr=False)
    partition: int
    fetch_offset: int
    log_start_offset: int
    partition_max_bytes: int
    current_leader_epoch: int
    last_fetched_epoch: int
    told_high_watermark: int = -1
    told_log_start_offset: int = -1
    read_stamp: tuple[object, ...] | None = None
    """The partition's ``fetch_stamp`` when this fetch's read of it left nothing to send
    (the fetcher at the log end, or at the high watermark or last stable offset)."""
    read_from: Partition | None = None
    """The replica ``read_stamp`` is of."""
    quiet_stamp: tuple[object, ...] | None = None
    """``read_stamp`` of the last answer the fetcher was told: while the partition's stamp
    is that, it is not read again (``quiet``)."""
    resting_on: Partition | None = None
    """The replica this partition rests on: until it stirs, the session does not visit it."""

    @classmethod
    def asked(cls, session: FetchSession, item: Any) -> SessionPartition:
        return cls(
            session,
            item.partition,
            item.fetch_offset,
            item.log_start_offset,
            item.partition_max_bytes,
            getattr(item, "current_leader_epoch", -1),
            getattr(item, "last_fetched_epoch", -1),
        )

    def ask(self, item: Any) -> None:
        """The fetcher sent this partition again: its position or limits changed."""
        self.fetch_offset = item.fetch_offset
        self.log_start_offset = item.log_start_offset
        self.partition_max_bytes = item.partition_max_bytes
        self.current_leader_epoch = getattr(item, "current_leader_epoch", -1)
        self.last_fetched_epoch = getattr(item, "last_fetched_epoch", -1)
        self.quiet_stamp = None
        self.wake()

    def has_news(self, answer: FetchedPartition[Any]) -> bool:
        return (
            answer.records_size > 0
            or answer.error_code != 0
            or answer.high_watermark != self.told_high_watermark
            or answer.log_start_offset != self.told_log_start_offset
            or answer.preferred_read_replica >= 0
        )

    def at_end(self, replica: Partition, stamp: tuple[object, ...]) -> None:
        """This fetch's read of ``replica`` (its ``fetch_stamp`` ``stamp``) left nothing to
        send: if the fetcher is told so, the partition rests."""
        self.read_stamp, self.read_from = stamp, replica

    def quiet(self, replica: Partition, stamp: tuple[object, ...]) -> FetchedPartition[Any] | None:
        """The answer of a partition whose fetch would find what it last found, nothing:
        the one told last time, which is no news; None if it must be read."""
        if stamp != self.quiet_stamp:
            return None
        self.at_end(replica, stamp)
        told_high_watermark = self.told_high_watermark
        return FetchedPartition(
            self.partition,
            ErrorCode.none.value,
            told_high_watermark,
            told_high_watermark,
            self.told_log_start_offset,
        )

    def told(self, answer: FetchedPartition[Any]) -> None:
        # after an error, the next answer is news whatever its offsets
        self.told_high_watermark = -1 if answer.error_code else answer.high_watermark
        self.told_log_start_offset = answer.log_start_offset
        self.quiet_stamp = None if answer.error_code else self.read_stamp
        # Nothing awaits between the read and its answer, so the replica is as read: from
        # here on, its next change stirs this partition.
        if self.quiet_stamp is not None and self.read_from is not None:
            self.resting_on = self.read_from
            self.resting_on.watch_quiet(self)
        self.read_stamp = self.read_from = None

    def stirred(self, grown: bool) -> None:
        """The replica this partition rests on changed (``grown``: it has new records)."""
        self.resting_on = None
        self.session.stirred(grown)

    def wake(self) -> None:
        """Visit this partition again at the session's next fetch."""
        if self.resting_on is not None:
            self.resting_on.unwatch_quiet(self)
            self.resting_on = None


@dataclass(frozen=True)
class SessionTopic:
    """A topic of a fetch as its partitions are read: shaped like a request's topic."""

    topic: str | None
    topic_id: uuid.UUID | None
    partitions: Sequence[Any]


@dataclass(eq=False)
class FetchSession:
    id: int
    privileged: bool
    """Opened by a follower (replica id >= 0)."""
    uses_topic_ids: bool
    created_at: float
    last_used: float
    partitions: dict[tuple[TopicKey, int], SessionPartition] = field(default_factory=dict)
    epoch: int = 1
    """The epoch the session's next fetch must carry."""
    swept_at: float = 0.0
    """When a fetch last read all its partitions, resting or not."""
    _stir: asyncio.Future[None] | None = field(default=None, init=False, repr=False)

    def topics(self) -> list[SessionTopic]:
        """The session's partitions to read, those not resting, in order, neighbours of one
        topic together (a topic may come more than once, as in Kafka's answers)."""
        runs: list[tuple[TopicKey, list[SessionPartition]]] = []
        for (topic, _), partition in self.partitions.items():
            if partition.resting_on is not None:
                continue
            if runs and runs[-1][0] == topic:
                runs[-1][1].append(partition)
            else:
                runs.append((topic, [partition]))
        return [
            SessionTopic(topic, None, parts)
            if isinstance(topic, str)
            else SessionTopic(None, topic, parts)
            for topic, parts in runs
        ]

    def wake_all(self) -> None:
        """Read every partition at the next fetch, resting or not; no replica holds on to
        the session after this."""
        for partition in self.partitions.values():
            partition.wake()

    def stirred(self, grown: bool) -> None:
        """A resting partition changed: a waiting fetch wakes for records, and a consumer's
        for any change, as it would waiting on the partition itself."""
        if (grown or not self.privileged) and self._stir is not None:
            self._stir.set_result(None)
            self._stir = None

    def wait_for_stir(self) -> asyncio.Future[None]:
        """A future resolved when a resting partition changes (see ``stirred``); shared, so
        wait on it with ``asyncio.wait``, never cancel it."""
        if self._stir is None:
            self._stir = asyncio.get_running_loop().create_future()
        return self._stir


@dataclass
class SessionFetch:
    """One Fetch's view of its session: the topics to read and, once read, what to answer."""

    session_id: int
    topics: Sequence[Any]
    session: FetchSession | None = None
    incremental: bool = False

    def refresh(self) -> Sequence[Any]:
        """The topics to read again after a wait: the session's partitions that stirred
        meanwhile join those read before."""
        assert self.session is not None, "only a session's partitions rest"
        self.topics = self.session.topics()
        return self.topics

    def answer(self, topics: list[FetchedTopic[T]]) -> list[FetchedTopic[T]]:
        """What the session's fetcher is told of ``topics`` (read in ``self.topics``'s
        order): everything for a full fetch, the partitions with news for an incremental
        one; the session remembers what it was told."""
        session = self.session
        if session is None:
            return topics
        answered: list[FetchedTopic[T]] = []
        sent_records = []
        for requested, fetched in zip(self.topics, topics, strict=True):
            key = requested.topic_id if session.uses_topic_ids else requested.topic
            kept = []
            for item, answer in zip(requested.partitions, fetched.partitions, strict=True):
                if not self.incremental or item.has_news(answer):
                    kept.append(answer)
                item.told(answer)
                if answer.records_size:
                    sent_records.append((key, item.partition))
            if kept:
                answered.append(FetchedTopic(fetched.name, kept, fetched.topic_id))
        if self.incremental:
            for position in sent_records:  # to the back of the session
                moved = session.partitions.pop(position, None)
                if moved is not None:  # a fetch of the next epoch may have forgotten it
                    session.partitions[position] = moved
        return answered

    def throttled(self, cache: FetchSessionCache) -> int:
        """The session id of an answer held back by a quota, which tells no partition: a
        full fetch's new session is closed (the fetcher starts again, as in Kafka)."""
        if self.session is not None and not self.incremental:
            cache.close(self.session.id)
            return SESSIONLESS
        return self.session_id


class FetchSessionCache:
    """The broker's fetch sessions, at most ``slots`` of them."""

    def __init__(
        self,
        slots: int,
        on_change: Callable[[int, int, int], None] = lambda sessions, partitions, evicted: None,
        clock: Callable[[], float] = time.monotonic,
        sweep_s: float = 1.0,
    ) -> None:
        self._slots = slots
        self._sweep_s = sweep_s
        """A session's fetches read all its partitions at least this often."""
        self._sessions: dict[int, FetchSession] = {}
        self._partitions = 0  # in all sessions
        self._on_change = on_change
        """Told the number of sessions, their partitions, and sessions just evicted."""
        self._clock = clock

    def __len__(self) -> int:
        return len(self._sessions)

    def begin(self, body: Any, version: int, privileged: bool) -> SessionFetch:
        """The session this Fetch continues, opens or closes; raises the request's error
        (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH, FETCH_SESSION_TOPIC_ID_ERROR)."""
        if version < SESSIONS_FROM:
            return SessionFetch(SESSIONLESS, body.topics)
        session_id, epoch = body.session_id, body.session_epoch
        uses_topic_ids = version >= TOPIC_IDS_FROM
        if epoch in (FINAL_EPOCH, INITIAL_EPOCH):
            if session_id != SESSIONLESS:
                self.close(session_id)
            if epoch == FINAL_EPOCH:
                return SessionFetch(SESSIONLESS, body.topics)
            size = sum(len(topic.partitions) for topic in body.topics)
            session = self._open(privileged, size, uses_topic_ids)
            if session is None:
                return SessionFetch(SESSIONLESS, body.topics)
            self._update(session, body.topics, (), uses_topic_ids)
            return SessionFetch(session.id, session.topics(), session)
        session = self._sessions.get(session_id)
        if session is None:
            raise KafkaError(ErrorCode.fetch_session_id_not_found, f"no fetch session {session_id}")
        if session.epoch != epoch:
            raise KafkaError(
                ErrorCode.invalid_fetch_session_epoch,
                f"fetch session {session_id} expects epoch {session.epoch}, not {epoch}",
            )
        if session.uses_topic_ids != uses_topic_ids:
            raise KafkaError(
                ErrorCode.fetch_session_topic_id_error,
                f"fetch session {session_id} names topics by "
                f"{'id' if session.uses_topic_ids else 'name'}",
            )
        session.epoch = 1 if epoch == 2**31 - 1 else epoch + 1
        now = session.last_used = self._clock()
        if now - session.swept_at >= self._sweep_s:
            session.wake_all()
            session.swept_at = now
        self._update(session, body.topics, body.forgotten_topics_data, uses_topic_ids)
        return SessionFetch(session.id, session.topics(), session, incremental=True)

    def close(self, session_id: int) -> None:
        session = self._sessions.pop(session_id, None)
        if session is not None:
            session.wake_all()
            self._partitions -= len(session.partitions)
            self._changed()

    def _update(
        self, session: FetchSession, topics: Any, forgotten: Any, uses_topic_ids: bool
    ) -> None:
        partitions = session.partitions
        before = len(partitions)
        for topic in topics:
            key = topic.topic_id if uses_topic_ids else topic.topic
            for item in topic.partitions:
                cached = partitions.get((key, item.partition))
                if cached is None:
                    partitions[(key, item.partition)] = SessionPartition.asked(session, item)
                else:
                    cached.ask(item)
        for topic in forgotten:
            key = topic.topic_id if uses_topic_ids else topic.topic
            for index in topic.partitions:
                dropped = partitions.pop((key, index), None)
                if dropped is not None:
                    dropped.wake()
        if len(partitions) != before:
            self._partitions += len(partitions) - before
            self._changed()

    def _open(self, privileged: bool, size: int, uses_topic_ids: bool) -> FetchSession | None:
        now = self._clock()
        if len(self._sessions) >= self._slots and not self._evict_for(privileged, size, now):
            return None
        session_id = random.randint(1, 2**31 - 1)
        while session_id in self._sessions:
            session_id = random.randint(1, 2**31 - 1)
        session = FetchSession(session_id, privileged, uses_topic_ids, now, now, swept_at=now)
        self._sessions[session_id] = session
        self._changed()
        return session

    def _evict_for(self, privileged: bool, size: int, now: float) -> bool:
        """Make room for a new session of ``size`` partitions; False if none may go."""
        if not self._sessions:
            return False
        unused = min(self._sessions.values(), key=lambda s: s.last_used)
        if now - unused.last_used > EVICTABLE_AFTER_S:
            return self._evict(unused)
        evictable = [
            s
            for s in self._sessions.values()
            if now - s.created_at > EVICTABLE_AFTER_S or (privileged and not s.privileged)
        ]
        if not evictable:
            return False
        least = min(evictable, key=lambda s: (s.privileged, len(s.partitions)))
        if (privileged, size) < (least.privileged, len(least.partitions)):
            return False  # worth less than every session it may evict
        return self._evict(least)

    def _evict(self, session: FetchSession) -> bool:
        del self._sessions[session.id]
        session.wake_all()
        self._partitions -= len(session.partitions)
        self._changed(evicted=1)
        return True

    def _changed(self, evicted: int = 0) -> None:
        self._on_change(len(self._sessions), self._partitions, evicted)
