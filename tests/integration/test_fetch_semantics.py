"""Fetch as Kafka serves it (issue 2, wire protocol): long polls, byte limits that
never split the first batch (KIP-74), and Kafka's error codes for bad positions."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from broker_process import Broker, BrokerFactory, unique_name
from kafka_wire import LATEST_TIMESTAMP, WireClient, build_batch, parse_batches

OFFSET_OUT_OF_RANGE = 1
UNKNOWN_TOPIC_OR_PARTITION = 3


@pytest.fixture
def topic(broker: Broker) -> str:
    name = unique_name("fetch")
    with WireClient.to(broker.bootstrap) as wire:
        wire.wait_for_topic(name, auto_create=True)
    return name


def produce_batches(broker: Broker, topic: str, sizes: list[int]) -> None:
    """One batch per size, each holding one record of that many bytes."""
    with WireClient.to(broker.bootstrap) as wire:
        for size in sizes:
            answer = wire.produce(topic, 0, bytes(build_batch([b"x" * size])))
            assert answer.error_code.value == 0


def test_fetch_at_log_end_waits_max_wait_then_returns_nothing(broker: Broker, topic: str) -> None:
    produce_batches(broker, topic, [10])
    with WireClient.to(broker.bootstrap) as wire:
        started = time.monotonic()
        answer = wire.fetch(topic, 0, 1, max_wait_ms=800, min_bytes=1)
        elapsed = time.monotonic() - started
    assert answer.error_code.value == 0
    assert not answer.records
    assert int(answer.high_watermark) == 1
    assert 0.6 <= elapsed < 5, f"long poll answered after {elapsed:.2f}s, max_wait 0.8s"


def test_waiting_fetch_returns_as_soon_as_a_record_arrives(broker: Broker, topic: str) -> None:
    result: dict[str, Any] = {}

    def long_poll() -> None:
        with WireClient.to(broker.bootstrap, timeout=20) as wire:
            started = time.monotonic()
            result["answer"] = wire.fetch(topic, 0, 0, max_wait_ms=10_000, min_bytes=1)
            result["elapsed"] = time.monotonic() - started

    poller = threading.Thread(target=long_poll)
    poller.start()
    time.sleep(0.3)
    produce_batches(broker, topic, [10])
    poller.join(20)
    assert "answer" in result, "the long poll never answered"
    batches, _ = parse_batches(bytes(result["answer"].records or b""))
    assert [b.base_offset for b in batches] == [0]
    assert result["elapsed"] < 5, f"woke after {result['elapsed']:.2f}s; max_wait was 10s"


@pytest.mark.parametrize("limit", ["max_bytes", "partition_max_bytes"])
def test_fetch_limit_below_first_batch_still_returns_that_whole_batch(
    broker: Broker, topic: str, limit: str
) -> None:
    produce_batches(broker, topic, [4000, 4000])
    with WireClient.to(broker.bootstrap) as wire:
        limits = {"max_bytes": 1 << 20, "partition_max_bytes": 1 << 20, limit: 100}
        answer = wire.fetch(topic, 0, 0, **limits)
    batches, _ = parse_batches(bytes(answer.records or b""))
    assert [b.base_offset for b in batches] == [0]


def test_partition_limit_returns_whole_batches_within_the_limit(broker: Broker, topic: str) -> None:
    produce_batches(broker, topic, [1000] * 5)
    with WireClient.to(broker.bootstrap) as wire:
        whole, _ = parse_batches(bytes(wire.fetch(topic, 0, 0).records or b""))
        batch_size = whole[0].size
        answer = wire.fetch(topic, 0, 0, partition_max_bytes=batch_size * 2 + batch_size // 2)
    records = bytes(answer.records or b"")
    batches, _ = parse_batches(records)
    assert [b.base_offset for b in batches] == [0, 1]
    assert len(records) <= batch_size * 2 + batch_size // 2


def test_broker_fetch_max_bytes_caps_what_a_request_asks_for(
    broker_factory: BrokerFactory,
) -> None:
    capped = broker_factory(settings={"fetch.max.bytes": "5000"})
    name = unique_name("capped")
    with WireClient.to(capped.bootstrap) as wire:
        wire.wait_for_topic(name, auto_create=True)
    produce_batches(capped, name, [2000] * 5)
    with WireClient.to(capped.bootstrap) as wire:
        records = bytes(wire.fetch(name, 0, 0, max_bytes=1 << 20).records or b"")
        first_alone = bytes(wire.fetch(name, 0, 0, max_bytes=1000).records or b"")
    batches, _ = parse_batches(records)
    assert [b.base_offset for b in batches] == [0, 1]
    assert len(records) <= 5000
    assert [b.base_offset for b in parse_batches(first_alone)[0]] == [0]


def test_fetch_past_log_end_is_offset_out_of_range(broker: Broker, topic: str) -> None:
    produce_batches(broker, topic, [10, 10])
    with WireClient.to(broker.bootstrap) as wire:
        assert wire.list_offset(topic, 0, LATEST_TIMESTAMP) == 2
        assert wire.fetch(topic, 0, 12).error_code.value == OFFSET_OUT_OF_RANGE


def test_fetch_of_unknown_partition_is_unknown_topic_or_partition(
    broker: Broker, topic: str
) -> None:
    with WireClient.to(broker.bootstrap) as wire:
        assert wire.fetch(topic, 7, 0).error_code.value == UNKNOWN_TOPIC_OR_PARTITION
        assert wire.fetch(unique_name("missing"), 0, 0).error_code.value == (
            UNKNOWN_TOPIC_OR_PARTITION
        )
