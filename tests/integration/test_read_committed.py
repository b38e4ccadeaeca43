"""Transaction markers on a real broker, written with WriteTxnMarkers as a coordinator
writes them: read_committed readers (librdkafka through confluent-kafka, and kcat) stop at
the last stable offset while a transaction is open, never see an aborted one, and see a
committed one whole; read_uncommitted readers see everything; ListOffsets and the Fetch
response report the LSO and the aborted transactions."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest
from broker_process import Broker, unique_name
from confluent_kafka import Consumer, TopicPartition
from kafka_wire import WireClient, build_batch, load_request_schema, nested

WRITE_TXN_MARKERS = 27
LATEST = -1
READ_COMMITTED = 1

pytestmark = pytest.mark.slow


def write_marker(wire: WireClient, topic: str, producer: tuple[int, int], commit: bool) -> int:
    """WriteTxnMarkers v1 for partition 0; the partition's error code."""
    schema = load_request_schema(WRITE_TXN_MARKERS, 1)
    marker = nested(schema, "WritableTxnMarker")(
        producer_id=producer[0],
        producer_epoch=producer[1],
        transaction_result=commit,
        topics=(nested(schema, "WritableTxnMarkerTopic")(name=topic, partition_indexes=(0,)),),
        coordinator_epoch=0,
    )
    answer = wire.call(WRITE_TXN_MARKERS, 1, schema(markers=(marker,)))
    return int(answer.markers[0].topics[0].partitions[0].error_code.value)


def produce_in_transaction(
    wire: WireClient, topic: str, producer: tuple[int, int], sequence: int, values: list[bytes]
) -> None:
    batch = build_batch(values, producer=(*producer, sequence), transactional=True)
    assert wire.produce(topic, 0, bytes(batch)).error_code.value == 0


def read_committed(broker: Broker, topic: str, end: int) -> list[bytes]:
    """What librdkafka's read_committed consumer reads of partition 0 up to ``end``."""
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": unique_name("txn-reader"),
            "isolation.level": "read_committed",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )
    values: list[bytes] = []
    try:
        consumer.assign([TopicPartition(topic, 0, 0)])
        while True:
            message = consumer.poll(10)
            assert message is not None, f"no end of partition seen; read {values}"
            if message.error() is not None:  # partition EOF: at the last stable offset
                assert message.offset() == end, f"stopped at {message.offset()}, not {end}"
                break
            values.append(message.value())
    finally:
        consumer.close()
    return values


def kcat(broker: Broker, topic: str, isolation: str) -> list[str]:
    done = subprocess.run(
        ["kcat", "-b", broker.bootstrap, "-C", "-t", topic, "-p", "0", "-o", "beginning", "-e",
         "-X", f"isolation.level={isolation}", "-f", "%s\n"],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    return done.stdout.split()


def fetched(wire: WireClient, topic: str) -> Any:
    return wire.fetch(topic, 0, 0, isolation_level=READ_COMMITTED)


def test_read_committed_readers_see_committed_transactions_only(broker: Broker) -> None:
    topic = unique_name("txn")
    with WireClient.to(broker.bootstrap) as wire:
        wire.wait_for_topic(topic, auto_create=True)
        first, second = wire.init_producer_id(), wire.init_producer_id()
        produce_in_transaction(wire, topic, first, 0, [b"a1", b"a2"])  # offsets 0-1
        produce_in_transaction(wire, topic, second, 0, [b"b1"])  # 2
        # both transactions open: read_committed readers stop at the first one
        assert wire.list_offset(topic, 0, LATEST) == 3
        assert wire.list_offset(topic, 0, LATEST, READ_COMMITTED) == 0
        assert read_committed(broker, topic, end=0) == []
        assert kcat(broker, topic, "read_uncommitted") == ["a1", "a2", "b1"]

        assert write_marker(wire, topic, first, commit=False) == 0  # 3: abort
        produce_in_transaction(wire, topic, first, 2, [b"a3"])  # 4: a new transaction
        assert write_marker(wire, topic, second, commit=True) == 0  # 5: commit
        assert write_marker(wire, topic, first, commit=True) == 0  # 6: commit
        assert wire.list_offset(topic, 0, LATEST, READ_COMMITTED) == 7
        answer = fetched(wire, topic)
        assert answer.last_stable_offset == 7
        aborted = [(t.producer_id, t.first_offset) for t in answer.aborted_transactions]
        assert aborted == [(first[0], 0)]
        assert read_committed(broker, topic, end=7) == [b"b1", b"a3"]
        assert kcat(broker, topic, "read_committed") == ["b1", "a3"]
        assert kcat(broker, topic, "read_uncommitted") == ["a1", "a2", "b1", "a3"]


def test_a_marker_of_an_older_producer_epoch_is_refused(broker: Broker) -> None:
    topic = unique_name("txn-fence")
    with WireClient.to(broker.bootstrap) as wire:
        wire.wait_for_topic(topic, auto_create=True)
        producer_id, _ = wire.init_producer_id()
        produce_in_transaction(wire, topic, (producer_id, 0), 0, [b"x"])
        assert write_marker(wire, topic, (producer_id, 1), commit=False) == 0  # epoch bumped
        invalid_producer_epoch = 47
        assert write_marker(wire, topic, (producer_id, 0), commit=True) == invalid_producer_epoch
        assert read_committed(broker, topic, end=2) == []
