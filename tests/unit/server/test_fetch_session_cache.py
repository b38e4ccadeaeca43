"""Fetch sessions (KIP-227) as the cache keeps them, fed real kio Fetch requests; their
resting partitions on real replicas: a partition whose answer left nothing to send is not
visited again until its replica stirs, its fetcher asks for it anew, or the session's
sweep comes round, and a waiting fetch wakes when a resting partition changes as it would
waiting on the partition itself."""

from __future__ import annotations

import asyncio
import datetime
import uuid
from pathlib import Path
from typing import Any

import pytest
from kio.schema.fetch.v12.request import FetchPartition as FetchPartitionV12
from kio.schema.fetch.v12.request import FetchRequest as FetchRequestV12
from kio.schema.fetch.v12.request import FetchTopic as FetchTopicV12
from kio.schema.fetch.v12.request import ForgottenTopic as ForgottenTopicV12
from kio.schema.fetch.v13.request import FetchPartition as FetchPartitionV13
from kio.schema.fetch.v13.request import FetchRequest as FetchRequestV13
from kio.schema.fetch.v13.request import FetchTopic as FetchTopicV13
from kio.static.primitive import i8, i32, i32Timedelta, i64
from partition_testing import one_record_batch

from odradek.broker.cluster.metadata_image import PartitionState
from odradek.broker.cluster.partition import Partition, PartitionKey
from odradek.broker.log import LogConfig, PartitionLog
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.fetch_response import FetchedPartition, FetchedTopic
from odradek.broker.server.fetch_sessions import (
    EVICTABLE_AFTER_S,
    SESSIONLESS,
    FetchSessionCache,
    SessionFetch,
)

Positions = dict[str, dict[int, int]]  # topic -> partition -> fetch offset


def request(schema: Any, session_id: int, epoch: int, topics: Any, forgotten: Any = ()) -> Any:
    """A Fetch of ``schema``'s version in session ``session_id`` at ``epoch``."""
    return schema(
        replica_id=i32(-1),
        max_wait=i32Timedelta.parse(datetime.timedelta(0)),
        min_bytes=i32(0),
        max_bytes=i32(1 << 20),
        isolation_level=i8(0),
        session_id=i32(session_id),
        session_epoch=i32(epoch),
        topics=topics,
        forgotten_topics_data=forgotten,
        rack_id="",
    )


def at(partition_class: Any, index: int, offset: int) -> Any:
    return partition_class(
        partition=i32(index),
        current_leader_epoch=i32(-1),
        fetch_offset=i64(offset),
        last_fetched_epoch=i32(-1),
        log_start_offset=i64(-1),
        partition_max_bytes=i32(1 << 20),
    )


def v12(
    positions: Positions,
    session_id: int = 0,
    epoch: int = 0,
    forgotten: dict[str, list[int]] | None = None,
) -> FetchRequestV12:
    topics = tuple(
        FetchTopicV12(
            topic=topic,
            partitions=tuple(at(FetchPartitionV12, i, offset) for i, offset in partitions.items()),
        )
        for topic, partitions in positions.items()
    )
    forgotten_topics = tuple(
        ForgottenTopicV12(topic=topic, partitions=tuple(i32(p) for p in indexes))
        for topic, indexes in (forgotten or {}).items()
    )
    return request(FetchRequestV12, session_id, epoch, topics, forgotten_topics)


def v13(topic_id: uuid.UUID, partition: int, session_id: int, epoch: int) -> FetchRequestV13:
    topic = FetchTopicV13(topic_id=topic_id, partitions=(at(FetchPartitionV13, partition, 0),))
    return request(FetchRequestV13, session_id, epoch, (topic,))


def read(
    fetch: SessionFetch, news: dict[tuple[str, int], dict[str, int]]
) -> list[FetchedTopic[Any]]:
    """What the Fetch handler would read for ``fetch``: partitions at high watermark 10 and
    log start 0 unless ``news`` says otherwise, answered through the session."""
    topics = [
        FetchedTopic(
            topic.topic,
            [
                FetchedPartition[Any](
                    item.partition,
                    **{
                        "error_code": 0,
                        "high_watermark": 10,
                        "last_stable_offset": 10,
                        "log_start_offset": 0,
                        **news.get((topic.topic, item.partition), {}),
                    },
                )
                for item in topic.partitions
            ],
        )
        for topic in fetch.topics
    ]
    return fetch.answer(topics)


def answered(topics: list[FetchedTopic[Any]]) -> list[tuple[str, int]]:
    return [(t.name, p.partition_index) for t in topics for p in t.partitions]


def asked(fetch: SessionFetch) -> list[tuple[str, int, int]]:
    return [(t.topic, p.partition, p.fetch_offset) for t in fetch.topics for p in t.partitions]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_an_incremental_fetch_reads_the_whole_session_and_answers_only_news() -> None:
    cache = FetchSessionCache(10)
    full = cache.begin(v12({"a": {0: 0, 1: 0}, "b": {0: 5}}), 12, privileged=False)
    assert full.session_id != SESSIONLESS
    assert answered(read(full, {})) == [("a", 0), ("a", 1), ("b", 0)]  # a full answer

    nothing_new = cache.begin(v12({}, full.session_id, 1), 12, privileged=False)
    assert asked(nothing_new) == [("a", 0, 0), ("a", 1, 0), ("b", 0, 5)]
    assert read(nothing_new, {}) == []

    moved = cache.begin(v12({"a": {1: 3}}, full.session_id, 2), 12, privileged=False)
    assert asked(moved) == [("a", 0, 0), ("a", 1, 3), ("b", 0, 5)]
    news = {
        ("a", 1): {"records_size": 100},
        ("b", 0): {"high_watermark": 11},
    }
    assert answered(read(moved, news)) == [("a", 1), ("b", 0)]
    # a partition that sent records goes to the back, so it cannot starve the others
    later = cache.begin(v12({}, full.session_id, 3), 12, privileged=False)
    assert asked(later) == [("a", 0, 0), ("b", 0, 5), ("a", 1, 3)]
    news = {("a", 0): {"log_start_offset": 2}, ("b", 0): {"high_watermark": 11}}
    assert answered(read(later, news)) == [("a", 0)]


def test_an_error_is_always_news_and_so_is_the_first_answer_after_it() -> None:
    cache = FetchSessionCache(10)
    full = cache.begin(v12({"a": {0: 0}}), 12, privileged=False)
    read(full, {})
    failing = cache.begin(v12({}, full.session_id, 1), 12, privileged=False)
    assert answered(read(failing, {("a", 0): {"error_code": 6}})) == [("a", 0)]
    healed = cache.begin(v12({}, full.session_id, 2), 12, privileged=False)
    assert answered(read(healed, {})) == [("a", 0)]
    quiet = cache.begin(v12({}, full.session_id, 3), 12, privileged=False)
    assert read(quiet, {}) == []


def test_forgotten_partitions_leave_the_session() -> None:
    cache = FetchSessionCache(10)
    full = cache.begin(v12({"a": {0: 0, 1: 0}}), 12, privileged=False)
    fewer = cache.begin(v12({}, full.session_id, 1, forgotten={"a": [0]}), 12, privileged=False)
    assert asked(fewer) == [("a", 1, 0)]


@pytest.mark.parametrize(
    ("session_id", "epoch", "code"),
    [
        (12345, 1, ErrorCode.fetch_session_id_not_found),
        (None, 2, ErrorCode.invalid_fetch_session_epoch),  # the session expects 1
    ],
)
def test_an_unknown_session_or_an_out_of_step_epoch_is_refused(
    session_id: int | None, epoch: int, code: ErrorCode
) -> None:
    cache = FetchSessionCache(10)
    full = cache.begin(v12({"a": {0: 0}}), 12, privileged=False)
    with pytest.raises(KafkaError) as refused:
        cache.begin(v12({}, session_id or full.session_id, epoch), 12, privileged=False)
    assert refused.value.code is code
    # a refused fetch leaves the session as it was
    assert asked(cache.begin(v12({}, full.session_id, 1), 12, privileged=False)) == [("a", 0, 0)]


def test_a_session_named_by_topic_names_is_not_continued_by_topic_ids() -> None:
    cache = FetchSessionCache(10)
    full = cache.begin(v12({"a": {0: 0}}), 12, privileged=False)
    with pytest.raises(KafkaError) as refused:
        cache.begin(v13(uuid.uuid4(), 0, full.session_id, 1), 13, privileged=False)
    assert refused.value.code is ErrorCode.fetch_session_topic_id_error


def test_topic_id_sessions_read_their_topics_by_id() -> None:
    cache = FetchSessionCache(10)
    topic_id = uuid.uuid4()
    full = cache.begin(v13(topic_id, 2, 0, 0), 13, privileged=False)
    next_fetch = cache.begin(v13(topic_id, 3, full.session_id, 1), 13, privileged=False)
    assert [(t.topic_id, [p.partition for p in t.partitions]) for t in next_fetch.topics] == [
        (topic_id, [2, 3])
    ]


def test_epoch_minus_one_closes_the_session_and_fetches_without_one() -> None:
    cache = FetchSessionCache(10)
    full = cache.begin(v12({"a": {0: 0}}), 12, privileged=False)
    sessionless = cache.begin(v12({"a": {0: 0}}, full.session_id, -1), 12, privileged=False)
    assert sessionless.session_id == SESSIONLESS and len(cache) == 0
    assert answered(read(sessionless, {})) == [("a", 0)]


def test_a_new_full_fetch_replaces_the_session_it_names() -> None:
    cache = FetchSessionCache(10)
    first = cache.begin(v12({"a": {0: 0}}), 12, privileged=False)
    second = cache.begin(v12({"b": {0: 0}}, first.session_id, 0), 12, privileged=False)
    assert second.session_id not in (SESSIONLESS, first.session_id) and len(cache) == 1


def test_old_fetch_versions_and_a_cache_without_slots_fetch_without_a_session() -> None:
    assert FetchSessionCache(10).begin(v12({"a": {0: 0}}), 6, False).session_id == SESSIONLESS
    assert FetchSessionCache(0).begin(v12({"a": {0: 0}}), 12, False).session_id == SESSIONLESS


def test_a_throttled_full_fetch_opens_no_session() -> None:
    cache = FetchSessionCache(10)
    full = cache.begin(v12({"a": {0: 0}}), 12, privileged=False)
    assert full.throttled(cache) == SESSIONLESS and len(cache) == 0
    again = cache.begin(v12({"a": {0: 0}}), 12, privileged=False)
    read(again, {})
    incremental = cache.begin(v12({}, again.session_id, 1), 12, privileged=False)
    assert incremental.throttled(cache) == again.session_id and len(cache) == 1


def test_a_full_cache_evicts_as_kafka_does() -> None:
    clock = Clock()
    changes: list[tuple[int, int, int]] = []
    cache = FetchSessionCache(2, lambda *change: changes.append(change), clock=clock)
    consumer = cache.begin(v12({"a": {0: 0, 1: 0}}), 12, privileged=False)
    follower = cache.begin(v12({"a": {2: 0}}), 12, privileged=True)
    # a young cache: a consumer's session may evict nothing, a follower's a consumer's
    assert cache.begin(v12({"a": {3: 0}}), 12, privileged=False).session_id == SESSIONLESS
    newer = cache.begin(v12({"a": {3: 0}}), 12, privileged=True)
    assert newer.session_id != SESSIONLESS
    with pytest.raises(KafkaError):  # the consumer's session went
        cache.begin(v12({}, consumer.session_id, 1), 12, privileged=False)
    assert changes[-1] == (2, 2, 0) and (1, 1, 1) in changes  # sessions, partitions, evicted

    # past the eviction age, the session unused longest goes first, whoever asks
    clock.now += EVICTABLE_AFTER_S / 2
    cache.begin(v12({}, newer.session_id, 1), 12, privileged=True)
    clock.now += EVICTABLE_AFTER_S / 2 + 1
    late = cache.begin(v12({"b": {0: 0}}), 12, privileged=False)
    assert late.session_id != SESSIONLESS
    with pytest.raises(KafkaError):
        cache.begin(v12({}, follower.session_id, 1), 12, privileged=True)
    assert cache.begin(v12({}, newer.session_id, 2), 12, privileged=True).incremental


# --- resting partitions ---------------------------------------------------------------

LEADER, FOLLOWER = 0, 1
SWEEP_S = 1.0


def replicas(tmp_path: Path, count: int) -> list[Partition]:
    """Leaders of partitions 0..count-1 of topic t, each with one follower."""
    made = []
    for index in range(count):
        log = PartitionLog.open(tmp_path / f"t-{index}", LogConfig())
        state = PartitionState(index, (LEADER, FOLLOWER), LEADER, 1, (LEADER, FOLLOWER))
        made.append(Partition(PartitionKey("t", index), log, state, LEADER))
    return made


def fetch(
    cache: FetchSessionCache,
    positions: dict[int, int],
    session_id: int = 0,
    epoch: int = 0,
    forgotten: tuple[int, ...] = (),
    privileged: bool = True,
) -> SessionFetch:
    """A follower's (``privileged``) or consumer's Fetch of topic t's ``positions``."""
    request = v12({"t": positions}, session_id, epoch, {"t": list(forgotten)})
    return cache.begin(request, 12, privileged)


def read_at_ends(session: SessionFetch, leaders: list[Partition]) -> list[int]:
    """Read the session's partitions as the Fetch handler does when each fetcher is at its
    replica's log end (nothing to send); answer; return the partitions read."""
    visited: list[int] = []
    topics: list[FetchedTopic[Any]] = []
    for topic in session.topics:
        answers = []
        for item in topic.partitions:
            replica = leaders[item.partition]
            visited.append(item.partition)
            stamp = replica.fetch_stamp(read_committed=False)
            quiet = item.quiet(replica, stamp)
            if quiet is None:
                item.at_end(replica, stamp)
                end = replica.high_watermark
                quiet = FetchedPartition[Any](item.partition, 0, end, end, 0)
            answers.append(quiet)
        topics.append(FetchedTopic("t", answers))
    session.answer(topics)
    return visited


def test_a_partition_with_nothing_to_send_rests_until_its_replica_changes(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        leaders = replicas(tmp_path, 3)
        cache = FetchSessionCache(10, clock=Clock(), sweep_s=SWEEP_S)
        full = fetch(cache, {0: 0, 1: 0, 2: 0})
        assert read_at_ends(full, leaders) == [0, 1, 2]
        session = full.session_id

        assert read_at_ends(fetch(cache, {}, session, 1), leaders) == []
        leaders[1].append_as_leader(one_record_batch(), -1, 1)
        assert read_at_ends(fetch(cache, {}, session, 2), leaders) == [1]
        assert read_at_ends(fetch(cache, {2: 0}, session, 3), leaders) == [2]  # asked for anew
        leaders[0].delete_records_before(0)  # a new log start stirs it too
        assert read_at_ends(fetch(cache, {}, session, 4), leaders) == [0]
        assert read_at_ends(fetch(cache, {}, session, 5), leaders) == []

    asyncio.run(scenario())


def test_every_partition_is_read_again_each_sweep(tmp_path: Path) -> None:
    async def scenario() -> None:
        leaders = replicas(tmp_path, 2)
        clock = Clock()
        cache = FetchSessionCache(10, clock=clock, sweep_s=SWEEP_S)
        session = fetch(cache, {0: 0, 1: 0}).session_id
        read_at_ends(fetch(cache, {}, session, 1), leaders)
        assert read_at_ends(fetch(cache, {}, session, 2), leaders) == []
        clock.now += SWEEP_S
        assert read_at_ends(fetch(cache, {}, session, 3), leaders) == [0, 1]
        assert read_at_ends(fetch(cache, {}, session, 4), leaders) == []

    asyncio.run(scenario())


def test_a_waiting_follower_wakes_for_records_a_consumer_for_a_high_watermark_too(
    tmp_path: Path,
) -> None:
    async def scenario() -> None:
        leaders = replicas(tmp_path, 1)
        cache = FetchSessionCache(10, clock=Clock(), sweep_s=SWEEP_S)
        follower = fetch(cache, {0: 0}, privileged=True)
        consumer = fetch(cache, {0: 0}, privileged=False)
        read_at_ends(follower, leaders)
        read_at_ends(consumer, leaders)
        assert follower.session is not None and consumer.session is not None
        follower_woken = follower.session.wait_for_stir()
        consumer_woken = consumer.session.wait_for_stir()

        written = leaders[0].append_as_leader(one_record_batch(), -1, 1)
        assert follower_woken.done() and consumer_woken.done()
        for waiting in (follower, consumer):  # they read the new records; nothing left
            read_at_ends(fetch(cache, {0: written.last_offset + 1}, waiting.session_id, 1), leaders)
        follower_woken = follower.session.wait_for_stir()
        consumer_woken = consumer.session.wait_for_stir()

        leaders[0].record_follower_fetch(FOLLOWER, written.last_offset + 1)
        assert leaders[0].high_watermark == written.last_offset + 1
        assert consumer_woken.done() and not follower_woken.done()
        assert read_at_ends(fetch(cache, {}, follower.session_id, 2), leaders) == [0]  # told the HW

    asyncio.run(scenario())


def test_a_closed_or_forgotten_partition_leaves_its_replica(tmp_path: Path) -> None:
    async def scenario() -> None:
        leaders = replicas(tmp_path, 2)
        cache = FetchSessionCache(10, clock=Clock(), sweep_s=SWEEP_S)
        kept = fetch(cache, {0: 0, 1: 0})
        read_at_ends(kept, leaders)
        assert kept.session is not None
        forgot = fetch(cache, {}, kept.session_id, 1, forgotten=(1,))
        closing = fetch(cache, {0: 0})
        read_at_ends(closing, leaders)
        assert closing.session is not None
        cache.close(closing.session_id)
        stirs = (kept.session.wait_for_stir(), closing.session.wait_for_stir())

        leaders[1].append_as_leader(one_record_batch(), -1, 1)
        assert not any(stir.done() for stir in stirs)  # nobody rests on partition 1
        leaders[0].append_as_leader(one_record_batch(), -1, 1)
        assert stirs[0].done() and not stirs[1].done()  # the closed session is gone
        assert forgot.session is kept.session

    asyncio.run(scenario())
