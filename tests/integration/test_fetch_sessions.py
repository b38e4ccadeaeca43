"""Incremental fetch sessions (KIP-227) on a real broker: over the wire, where each step of
a session's life can be seen, and with kafka-python's consumer, which keeps sessions."""

from __future__ import annotations

import datetime
import logging
import threading
import time
from typing import Any

import kafka
import pytest
from broker_process import Broker, unique_name
from cluster_harness import Cluster, ClusterFactory
from confluent_kafka import TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from kafka_wire import Request, WireClient, build_batch, load_request_schema, nested
from kio.static.primitive import i8, i32, i32Timedelta, i64
from replica_logs import assert_replicas_identical
from test_cluster_failover import TOPIC_CONFIGS, produce_acked

API_FETCH = 1
VERSION = 12
PARTITIONS = 3
FETCH_SESSION_ID_NOT_FOUND = 70
INVALID_FETCH_SESSION_EPOCH = 71
UNKNOWN_TOPIC_OR_PARTITION = 3


def fetch_in_session(
    topic: str,
    positions: dict[int, int],
    session_id: int,
    epoch: int,
    max_wait_ms: int = 0,
) -> Request:
    """Fetch v12 of ``positions`` (partition -> offset) as session ``session_id``'s
    ``epoch``-th fetch (0: open one)."""
    schema = load_request_schema(API_FETCH, VERSION)
    partitions = tuple(
        nested(schema, "FetchPartition")(
            partition=i32(index),
            current_leader_epoch=i32(-1),
            fetch_offset=i64(offset),
            last_fetched_epoch=i32(-1),
            log_start_offset=i64(-1),
            partition_max_bytes=i32(1 << 20),
        )
        for index, offset in positions.items()
    )
    topics = (nested(schema, "FetchTopic")(topic=topic, partitions=partitions),)
    return Request(
        API_FETCH,
        VERSION,
        schema(
            replica_id=i32(-1),
            max_wait=i32Timedelta.parse(datetime.timedelta(milliseconds=max_wait_ms)),
            min_bytes=i32(1),
            max_bytes=i32(1 << 20),
            isolation_level=i8(0),
            session_id=i32(session_id),
            session_epoch=i32(epoch),
            topics=topics if positions else (),
            forgotten_topics_data=(),
            rack_id="",
        ),
    )


def log_starts(response: Any) -> dict[int, int]:
    """partition -> log start offset of each partition answered."""
    return {
        int(p.partition_index): int(p.log_start_offset)
        for t in response.responses
        for p in t.partitions
    }


def errors(response: Any) -> dict[int, int]:
    """partition -> error code of each partition answered."""
    return {
        int(p.partition_index): p.error_code.value for t in response.responses for p in t.partitions
    }


def answered(response: Any) -> dict[int, tuple[int, int]]:
    """partition -> (high watermark, bytes of records) of each partition answered."""
    return {
        int(p.partition_index): (int(p.high_watermark), len(p.records or b""))
        for t in response.responses
        for p in t.partitions
    }


@pytest.fixture
def topic(broker: Broker) -> str:
    name = unique_name("sessions")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap, "log_level": 0})
    admin.create_topics([NewTopic(name, PARTITIONS, 1)])[name].result(timeout=30)
    with WireClient.to(broker.bootstrap) as wire:
        wire.wait_for_topic(name, auto_create=False)
    return name


def produce(broker: Broker, topic: str, partition: int, value: bytes) -> None:
    with WireClient.to(broker.bootstrap) as wire:
        assert wire.produce(topic, partition, bytes(build_batch([value]))).error_code.value == 0


def test_a_session_answers_only_the_partitions_with_news(broker: Broker, topic: str) -> None:
    sessions_before = broker.metric("odradek_fetch_sessions")
    produce(broker, topic, 0, b"before")
    with WireClient.to(broker.bootstrap, timeout=20) as wire:
        full = wire.call(*fetch_in_session(topic, {0: 0, 1: 0, 2: 0}, 0, 0))
        session = int(full.session_id)
        assert session != 0 and full.error_code.value == 0
        first = answered(full)
        assert first[0][0] == 1 and first[0][1] > 0 and first[1] == first[2] == (0, 0)
        assert broker.metric("odradek_fetch_sessions") == sessions_before + 1

        # partition 0 moved on; nothing new anywhere: an empty answer after max_wait
        quiet = wire.call(*fetch_in_session(topic, {0: 1}, session, 1, max_wait_ms=300))
        assert int(quiet.session_id) == session and answered(quiet) == {}

        # a record for partition 2 wakes the session's long poll, and only 2 is answered
        threading.Timer(0.3, produce, (broker, topic, 2, b"news")).start()
        started = time.monotonic()
        woken = wire.call(*fetch_in_session(topic, {}, session, 2, max_wait_ms=10_000))
        assert time.monotonic() - started < 5
        assert list(answered(woken)) == [2] and answered(woken)[2][0] == 1
        assert answered(woken)[2][1] > 0

        stale = wire.call(*fetch_in_session(topic, {}, session, 2))
        assert stale.error_code.value == INVALID_FETCH_SESSION_EPOCH and answered(stale) == {}
        unknown = wire.call(*fetch_in_session(topic, {}, session + 1, 1))
        assert unknown.error_code.value == FETCH_SESSION_ID_NOT_FOUND

        # the session stands after a refused fetch; epoch -1 closes it
        caught_up = wire.call(*fetch_in_session(topic, {2: 1}, session, 3))
        assert answered(caught_up) == {}
        closed = wire.call(*fetch_in_session(topic, {0: 1}, session, -1))
        assert int(closed.session_id) == 0 and list(answered(closed)) == [0]
    assert broker.metric("odradek_fetch_sessions") == sessions_before


def test_a_quiet_partition_is_answered_again_once_it_changes(broker: Broker, topic: str) -> None:
    """A session does not read again a partition whose last answer left nothing to send,
    until something its answer shows changes: its log start, its records, its topic."""
    admin = AdminClient({"bootstrap.servers": broker.bootstrap, "log_level": 0})
    for partition in range(PARTITIONS):
        for value in (b"a", b"b"):
            produce(broker, topic, partition, value)
    with WireClient.to(broker.bootstrap, timeout=20) as wire:
        full = wire.call(*fetch_in_session(topic, {0: 2, 1: 2, 2: 2}, 0, 0))
        session = int(full.session_id)
        assert answered(full) == {0: (2, 0), 1: (2, 0), 2: (2, 0)}
        assert answered(wire.call(*fetch_in_session(topic, {}, session, 1))) == {}

        trimmed = TopicPartition(topic, 1, 1)
        admin.delete_records([trimmed])[trimmed].result(30)
        after_trim = wire.call(*fetch_in_session(topic, {}, session, 2))
        assert log_starts(after_trim) == {1: 1}
        assert answered(wire.call(*fetch_in_session(topic, {}, session, 3))) == {}

        produce(broker, topic, 2, b"c")
        news = answered(wire.call(*fetch_in_session(topic, {}, session, 4)))
        assert list(news) == [2] and news[2][0] == 3 and news[2][1] > 0

        admin.delete_topics([topic])[topic].result(30)
        gone = wire.call(*fetch_in_session(topic, {}, session, 5))
        assert errors(gone) == dict.fromkeys(range(PARTITIONS), UNKNOWN_TOPIC_OR_PARTITION)


def test_kafka_python_consumes_through_an_incremental_session(
    broker: Broker, topic: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="kafka.consumer.fetcher")
    values = {partition: [f"{partition}-{i}".encode() for i in range(50)] for partition in range(3)}
    producer = kafka.KafkaProducer(bootstrap_servers=broker.bootstrap, linger_ms=5)
    consumer = kafka.KafkaConsumer(
        topic,
        bootstrap_servers=broker.bootstrap,
        group_id=None,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=200,
        consumer_timeout_ms=15_000,
    )
    received: dict[int, list[bytes]] = {0: [], 1: [], 2: []}
    try:
        # half before the consumer starts, half while it is polling
        for partition, batch in values.items():
            for value in batch[:25]:
                producer.send(topic, value, partition=partition)
        producer.flush()
        for record in consumer:
            received[record.partition].append(record.value)
            if sum(map(len, received.values())) == 75:
                for partition, batch in values.items():
                    for value in batch[25:]:
                        producer.send(topic, value, partition=partition)
                producer.flush()
            if sum(map(len, received.values())) == 150:
                break
    finally:
        consumer.close()
        producer.close()
    assert received == values
    messages = [record.getMessage() for record in caplog.records]
    assert any("created a new incremental fetch session" in m for m in messages), messages[-20:]
    assert any("sent an incremental fetch response for session" in m for m in messages)
    assert not [m for m in messages if "invalid" in m or "unable to process" in m]


def test_followers_replicate_through_fetch_sessions(cluster_factory: ClusterFactory) -> None:
    """Each broker follows the other two's partitions, one session with each leader; what
    they replicate through the sessions' incremental fetches is byte for byte the leader's."""
    cluster = cluster_factory(brokers=3)
    topic = cluster.create_topic(6, 3, TOPIC_CONFIGS, prefix="session-replication")
    produced = produce_acked(cluster.bootstrap, topic, 3000)
    cluster.wait_until(lambda: cluster.fully_replicated(topic), "all replicas in sync")
    assert sum(assert_replicas_identical(cluster, topic, 6).values()) == produced
    for node_id, broker in cluster.brokers.items():
        sessions = broker.metric("odradek_fetch_sessions")
        assert sessions == 2, f"broker {node_id} holds {sessions} fetch sessions"
    # every follower replica is in its leader's session with it: 6 partitions, 2 followers
    held = sum(b.metric("odradek_fetch_session_partitions") for b in cluster.brokers.values())
    assert held == 12


def test_idle_followers_stay_in_sync_while_their_sessions_skip_every_partition(
    cluster_factory: ClusterFactory,
) -> None:
    """Followers at the log end of idle partitions send fetches the leader answers without
    reading; the leader still counts each one as the follower caught up, so no ISR shrinks
    after twice replica.lag.time.max.ms of nothing to replicate."""
    cluster = cluster_factory(brokers=3)
    topic = cluster.create_topic(6, 3, TOPIC_CONFIGS, prefix="idle-followers")
    produce_acked(cluster.bootstrap, topic, 300)
    cluster.wait_until(lambda: cluster.fully_replicated(topic), "all replicas in sync")
    lag_s = int(cluster.brokers[0].settings["replica.lag.time.max.ms"]) / 1000
    shrinks_before = shrinks(cluster)
    time.sleep(2 * lag_s + 1)
    assert shrinks(cluster) == shrinks_before
    isrs = {p: cluster.partition(topic, p).isr for p in range(6)}
    assert all(len(isr) == 3 for isr in isrs.values()), isrs


def shrinks(cluster: Cluster) -> float:
    return sum(broker.metric("odradek_isr_shrinks_total") for broker in cluster.brokers.values())
