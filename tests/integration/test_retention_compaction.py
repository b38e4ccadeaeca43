"""Retention and compaction end to end (issue 4, "What it must show" points 1 and 2).

A broker with a short retention check interval and cleaner backoff deletes
expired segments and compacts ``cleanup.policy=compact`` topics while clients
keep working: old segments go within the check interval and consumers below
the log start are reset per their policy; a compacted topic written with every
codec, many updates per key and tombstones reads back, through kafka-python
and confluent-kafka, exactly the last record per key at its original offset.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from broker_process import Broker, BrokerFactory, unique_name
from confluent_kafka.admin import AdminClient, NewTopic
from kafka_clients import (
    BEGINNING,
    ConfluentClient,
    InRecord,
    KafkaPythonClient,
    OutRecord,
)

TIMEOUT_S = 30.0
HOUR_MS = 3600 * 1000
COMPRESSED_CODECS = ("gzip", "snappy", "lz4", "zstd")
CONSUMERS = (KafkaPythonClient(), ConfluentClient())
SMALL_BATCHES = 1024  # producer batch.size: a produce request must fit a small segment
FAST_SCHEDULE = {"log.retention.check.interval.ms": "200", "log.cleaner.backoff.ms": "200"}


@pytest.fixture
def fast_broker(broker_factory: BrokerFactory) -> Broker:
    """A broker checking retention and cleaning every 200 ms."""
    return broker_factory(settings=FAST_SCHEDULE)


def create_topic(broker: Broker, **configs: str) -> str:
    name = unique_name("retention")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    admin.create_topics([NewTopic(name, 1, 1, config=configs)])[name].result(10)
    return name


def eventually(check: Callable[[], bool], what: str, timeout: float = TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(0.2)


def values(prefix: bytes, count: int, timestamp_ms: int | None = None) -> list[OutRecord]:
    return [OutRecord(b"%s-%d" % (prefix, i), b"v" * 200, (), timestamp_ms) for i in range(count)]


def test_time_retention_drops_old_segments_and_consumers_below_start_are_reset(
    fast_broker: Broker,
) -> None:
    topic = create_topic(fast_broker, **{"retention.ms": "60000", "segment.bytes": "2048"})
    producer = KafkaPythonClient()
    old = producer.produce(
        fast_broker.bootstrap,
        topic,
        0,
        values(b"old", 40, int(time.time() * 1000) - HOUR_MS),
        batch_size=SMALL_BATCHES,
    )
    new = producer.produce(
        fast_broker.bootstrap, topic, 0, values(b"new", 40), batch_size=SMALL_BATCHES
    )

    eventually(
        lambda: producer.offsets(fast_broker.bootstrap, topic, 0)[0] > 0, "old segments deleted"
    )

    earliest, latest = producer.offsets(fast_broker.bootstrap, topic, 0)
    assert old[0] < earliest <= new[0] and latest == new[-1] + 1
    for consumer in CONSUMERS:
        # offset 0 is below the log start: auto.offset.reset=earliest applies
        got = consumer.consume(fast_broker.bootstrap, topic, 0, 0, latest - earliest)
        assert [r.offset for r in got] == list(range(earliest, latest)), consumer
        assert all((r.key or b"").startswith(b"new-") for r in got if r.offset >= new[0])


def test_size_retention_keeps_the_newest_segments_within_retention_bytes(
    fast_broker: Broker,
) -> None:
    topic = create_topic(fast_broker, **{"retention.bytes": "4096", "segment.bytes": "2048"})
    client = KafkaPythonClient()
    offsets = client.produce(
        fast_broker.bootstrap, topic, 0, values(b"r", 100), batch_size=SMALL_BATCHES
    )

    eventually(lambda: client.offsets(fast_broker.bootstrap, topic, 0)[0] > 0, "size retention")

    earliest, latest = client.offsets(fast_broker.bootstrap, topic, 0)
    assert latest == offsets[-1] + 1
    assert 0 < latest - earliest < 40  # about two segments of ~230-byte records remain
    got = client.consume(fast_broker.bootstrap, topic, 0, BEGINNING, latest - earliest)
    assert [r.offset for r in got] == list(range(earliest, latest))


def test_topic_configs_apply_again_to_the_logs_a_restarted_broker_loads(
    fast_broker: Broker,
) -> None:
    """After a restart the topic's own segment.bytes and retention.bytes still hold: the
    broker's defaults (1 GiB segments, no size limit) would delete nothing."""
    topic = create_topic(fast_broker, **{"retention.bytes": "4096", "segment.bytes": "2048"})
    fast_broker.stop()
    fast_broker.start()
    client = KafkaPythonClient()
    client.produce(fast_broker.bootstrap, topic, 0, values(b"r", 100), batch_size=SMALL_BATCHES)

    eventually(lambda: client.offsets(fast_broker.bootstrap, topic, 0)[0] > 0, "size retention")


def produce_updates(broker: Broker, topic: str) -> dict[bytes, tuple[int, bytes | None]]:
    """Many updates per key with every codec, some ending in a tombstone; key -> last
    (offset, value), then filler with unique keys so the updates are all in sealed segments."""
    last: dict[bytes, tuple[int, bytes | None]] = {}
    client = KafkaPythonClient()
    for round_ in range(3):
        for codec in COMPRESSED_CODECS:
            records = [
                OutRecord(
                    b"%s-%d" % (codec.encode(), key),
                    None
                    if round_ == 2 and key % 3 == 0
                    else b"%s-%d-%d" % (codec.encode(), key, round_),
                )
                for key in range(12)
            ]
            offsets = client.produce(broker.bootstrap, topic, 0, records, codec=codec)
            for record, offset in zip(records, offsets, strict=True):
                assert record.key is not None
                last[record.key] = (offset, record.value)
    filler = [OutRecord(b"filler-%d" % i, b"f" * 300) for i in range(20)]
    for record, offset in zip(
        filler,
        client.produce(broker.bootstrap, topic, 0, filler, batch_size=SMALL_BATCHES),
        strict=True,
    ):
        assert record.key is not None
        last[record.key] = (offset, record.value)
    return last


Client = KafkaPythonClient | ConfluentClient


def read_first(
    consumer: Client, broker: Broker, topic: str, count: int, timeout: float = 20.0
) -> list[InRecord]:
    """The first ``count`` records from the log start (all of them once compacted to ``count``)."""
    return consumer.consume(broker.bootstrap, topic, 0, BEGINNING, count, timeout)


def compacted_view(records: list[InRecord]) -> dict[bytes, tuple[int, bytes | None]]:
    return {r.key: (r.offset, r.value) for r in records if r.key is not None}


def test_compacted_topic_reads_back_the_last_record_of_each_key_at_its_offset(
    fast_broker: Broker,
) -> None:
    topic = create_topic(
        fast_broker,
        **{
            "cleanup.policy": "compact",
            "segment.bytes": "2048",
            "min.cleanable.dirty.ratio": "0.01",
        },
    )
    expected = produce_updates(fast_broker, topic)

    eventually(
        lambda: (
            compacted_view(read_first(KafkaPythonClient(), fast_broker, topic, len(expected)))
            == expected
        ),
        "the log compacted to one record per key",
    )

    for consumer in CONSUMERS:
        records = read_first(consumer, fast_broker, topic, len(expected) + 1, timeout=3)
        assert len(records) == len(expected), consumer
        offsets = [r.offset for r in records]
        assert offsets == sorted(set(offsets)), consumer
        # every offset as the producer got it; tombstones kept: delete.retention.ms not passed
        assert compacted_view(records) == expected, consumer


def test_tombstones_disappear_after_delete_retention_ms(fast_broker: Broker) -> None:
    topic = create_topic(
        fast_broker,
        **{
            "cleanup.policy": "compact",
            "segment.bytes": "2048",
            "min.cleanable.dirty.ratio": "0.01",
            "delete.retention.ms": "1000",
        },
    )
    expected = produce_updates(fast_broker, topic)
    live = {key: last for key, last in expected.items() if last[1] is not None}
    client = KafkaPythonClient()
    more = 0

    def tombstones_gone() -> bool:
        nonlocal more
        # cleanings run when there is new dirty data: keep some coming
        filler = [OutRecord(b"more-%d" % (more + i), b"m" * 300) for i in range(8)]
        for record, offset in zip(
            filler,
            client.produce(fast_broker.bootstrap, topic, 0, filler, batch_size=SMALL_BATCHES),
            strict=True,
        ):
            assert record.key is not None
            live[record.key] = (offset, record.value)
        more += len(filler)
        return compacted_view(read_first(client, fast_broker, topic, len(live))) == live

    eventually(tombstones_gone, "tombstones removed after delete.retention.ms")
