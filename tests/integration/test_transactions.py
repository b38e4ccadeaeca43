"""Transactions with librdkafka's transactional producer (confluent-kafka) on a real broker:
committed transactions are read by read_committed consumers, aborted ones never are, and a
new producer with the same transactional.id fences the old one."""

from __future__ import annotations

import time
from typing import Any

import pytest
from broker_process import Broker, BrokerFactory, unique_name
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from kafka_tools import kafka_tool
from kafka_wire import WireClient, load_request_schema, nested

pytestmark = pytest.mark.slow
TIMEOUT_S = 30


def topic_of(broker: Broker, partitions: int = 2) -> str:
    name = unique_name("txn")
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    for future in admin.create_topics([NewTopic(name, partitions, 1)]).values():
        future.result(TIMEOUT_S)
    return name


def transactional(broker: Broker, transactional_id: str, **config: str) -> Producer:
    producer = Producer(
        {"bootstrap.servers": broker.bootstrap, "transactional.id": transactional_id, **config}
    )
    producer.init_transactions(TIMEOUT_S)
    return producer


def read_committed(
    bootstrap: str,
    topic: str,
    partitions: int = 2,
    config: dict[str, str] | None = None,
    isolation: str = "read_committed",
) -> list[str]:
    """Every value the topic's partitions hold for a consumer of ``isolation``, sorted."""
    consumer = Consumer(
        {
            **(config or {}),
            "bootstrap.servers": bootstrap,
            "group.id": unique_name("reader"),
            "isolation.level": isolation,
            "auto.offset.reset": "earliest",
            "enable.partition.eof": True,
        }
    )
    consumer.subscribe([topic])
    values: list[str] = []
    at_end: set[int] = set()
    try:
        while len(at_end) < partitions:
            message = consumer.poll(TIMEOUT_S)
            assert message is not None, f"no end of partition seen; read {values}"
            if message.error() is not None:
                assert message.error().code() == KafkaError._PARTITION_EOF, message.error()
                at_end.add(message.partition())
                continue
            values.append(message.value().decode())
    finally:
        consumer.close()
    return sorted(values)


def assert_fenced(producer: Producer) -> None:
    """The producer's commit fails as librdkafka reports a fenced producer."""
    with pytest.raises(KafkaException) as fenced:
        producer.commit_transaction(TIMEOUT_S)
    assert fenced.value.args[0].code() in (
        KafkaError._FENCED,
        KafkaError.PRODUCER_FENCED,
        KafkaError.INVALID_PRODUCER_EPOCH,
    )


def test_committed_transactions_are_read_and_aborted_ones_are_not(broker: Broker) -> None:
    topic = topic_of(broker)
    producer = transactional(broker, unique_name("app"))
    producer.begin_transaction()
    for i in range(4):
        producer.produce(topic, f"committed-{i}".encode(), partition=i % 2)
    producer.commit_transaction(TIMEOUT_S)
    producer.begin_transaction()
    producer.produce(topic, b"aborted-0", partition=0)
    producer.produce(topic, b"aborted-1", partition=1)
    producer.flush(TIMEOUT_S)
    producer.abort_transaction(TIMEOUT_S)
    producer.begin_transaction()
    producer.produce(topic, b"after", partition=1)
    producer.commit_transaction(TIMEOUT_S)
    assert read_committed(broker.bootstrap, topic) == [
        "after", "committed-0", "committed-1", "committed-2", "committed-3"
    ]  # fmt: skip
    # read_uncommitted sees the aborted records too, and never a marker as a record
    assert read_committed(broker.bootstrap, topic, isolation="read_uncommitted") == [
        "aborted-0", "aborted-1", "after", "committed-0", "committed-1", "committed-2",
        "committed-3",
    ]  # fmt: skip
    # and so does the Java client, through Kafka's console consumer
    for isolation, count in (("read_committed", 5), ("read_uncommitted", 7)):
        printed = kafka_tool(
            "kafka-console-consumer", "--bootstrap-server", broker.bootstrap, "--topic", topic,
            "--from-beginning", "--timeout-ms", "5000", "--isolation-level", isolation,
        )  # fmt: skip
        assert sorted(printed.split()) == read_committed(
            broker.bootstrap, topic, isolation=isolation
        )
        assert len(printed.split()) == count


def test_a_transaction_left_open_past_its_timeout_is_aborted_and_blocks_no_reader(
    broker_factory: BrokerFactory,
) -> None:
    broker = broker_factory(start=False)
    broker.settings["transaction.abort.timed.out.transaction.cleanup.interval.ms"] = "200"
    broker.start()
    topic = topic_of(broker, 1)
    abandoned = Producer(
        {
            "bootstrap.servers": broker.bootstrap,
            "transactional.id": unique_name("abandoned"),
            "transaction.timeout.ms": 2000,
        }
    )
    abandoned.init_transactions(TIMEOUT_S)
    abandoned.begin_transaction()
    abandoned.produce(topic, b"abandoned", partition=0)
    abandoned.flush(TIMEOUT_S)
    plain = Producer({"bootstrap.servers": broker.bootstrap})
    plain.produce(topic, b"later", partition=0)
    assert plain.flush(TIMEOUT_S) == 0
    # the open transaction holds the last stable offset back: nothing is readable yet
    assert stable_end(broker, topic) == 0
    deadline = time.monotonic() + TIMEOUT_S
    while stable_end(broker, topic) == 0 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert read_committed(broker.bootstrap, topic, partitions=1) == ["later"]
    assert_fenced(abandoned)


def stable_end(broker: Broker, topic: str) -> int:
    """Partition 0's end for a read_committed consumer: its last stable offset."""
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": unique_name("lso"),
         "isolation.level": "read_committed"}
    )  # fmt: skip
    try:
        _, high = consumer.get_watermark_offsets(TopicPartition(topic, 0), TIMEOUT_S)
        return int(high)
    finally:
        consumer.close()


def test_a_new_producer_with_the_same_id_fences_the_old_one(broker: Broker) -> None:
    topic = topic_of(broker)
    transactional_id = unique_name("app")
    zombie = transactional(broker, transactional_id)
    zombie.begin_transaction()
    zombie.produce(topic, b"zombie", partition=0)
    zombie.flush(TIMEOUT_S)
    successor = transactional(broker, transactional_id)  # aborts the zombie's transaction
    successor.begin_transaction()
    successor.produce(topic, b"successor", partition=0)
    successor.commit_transaction(TIMEOUT_S)
    assert_fenced(zombie)
    assert read_committed(broker.bootstrap, topic) == ["successor"]


@pytest.mark.parametrize(
    "factory", ["cluster_factory", "secured_cluster_factory"], ids=["plaintext", "secured"]
)
def test_a_transaction_over_partitions_led_by_other_brokers(
    factory: str, request: pytest.FixtureRequest
) -> None:
    """The coordinator sends WriteTxnMarkers to the leaders that are not itself, over the
    inter-broker listener (secured: SASL_SSL, and clients on SSL with client certificates);
    __transaction_state is replicated, as Kafka's settings ask."""
    cluster = request.getfixturevalue(factory)(brokers=3)
    topic = cluster.create_topic(3, 3, prefix="txn")
    leaders = {cluster.leader_of(topic, index) for index in range(3)}
    assert len(leaders) > 1, "the partitions' leaders should be spread"
    config = cluster.client_config
    producer = Producer(
        {**config, "bootstrap.servers": cluster.bootstrap, "transactional.id": unique_name("app")}
    )
    producer.init_transactions(TIMEOUT_S)
    producer.begin_transaction()
    for i in range(3):
        producer.produce(topic, f"committed-{i}".encode(), partition=i)
    producer.commit_transaction(TIMEOUT_S)
    producer.begin_transaction()
    for i in range(3):
        producer.produce(topic, f"aborted-{i}".encode(), partition=i)
    producer.flush(TIMEOUT_S)
    producer.abort_transaction(TIMEOUT_S)
    assert read_committed(cluster.bootstrap, topic, partitions=3, config=config) == [
        "committed-0", "committed-1", "committed-2"
    ]  # fmt: skip


def test_offsets_sent_to_a_transaction_count_only_if_it_commits(broker: Broker) -> None:
    """Consume-transform-produce: the input offsets go with the output records."""
    source, sink = topic_of(broker, 1), topic_of(broker, 1)
    loader = Producer({"bootstrap.servers": broker.bootstrap})
    for i in range(4):
        loader.produce(source, f"in-{i}".encode())
    loader.flush(TIMEOUT_S)
    group = unique_name("etl")
    consumer = Consumer(
        {
            "bootstrap.servers": broker.bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
        }
    )
    consumer.subscribe([source])
    producer = transactional(broker, unique_name("etl"))

    def process(count: int, commit: bool) -> None:
        producer.begin_transaction()
        for message in consumer.consume(count, TIMEOUT_S):
            assert message.error() is None, message.error()
            producer.produce(sink, b"out-" + message.value())
        positions = consumer.position(consumer.assignment())
        producer.send_offsets_to_transaction(
            positions, consumer.consumer_group_metadata(), TIMEOUT_S
        )
        if commit:
            producer.commit_transaction(TIMEOUT_S)
        else:
            producer.abort_transaction(TIMEOUT_S)

    try:
        process(2, commit=True)
        [committed] = consumer.committed([TopicPartition(source, 0)], TIMEOUT_S)
        assert committed.offset == 2
        process(2, commit=False)
        [committed] = consumer.committed([TopicPartition(source, 0)], TIMEOUT_S)
        assert committed.offset == 2  # the aborted transaction's offsets do not count
    finally:
        consumer.close()
    assert read_committed(broker.bootstrap, sink, partitions=1) == ["out-in-0", "out-in-1"]


API_OFFSET_FETCH = 9
UNSTABLE_OFFSET_COMMIT = 88


def offset_fetch(broker: Broker, group: str, topic: str, require_stable: bool) -> Any:
    """OffsetFetch v8 of partition 0 of ``topic``: its (offset, error code)."""
    schema = load_request_schema(API_OFFSET_FETCH, 8)
    topics = (nested(schema, "OffsetFetchRequestTopics")(name=topic, partition_indexes=(0,)),)
    request = schema(
        groups=(nested(schema, "OffsetFetchRequestGroup")(group_id=group, topics=topics),),
        require_stable=require_stable,
    )
    with WireClient.to(broker.bootstrap) as client:
        [answer] = client.call(API_OFFSET_FETCH, 8, request).groups[0].topics[0].partitions
    return answer.committed_offset, answer.error_code.value


def test_offsets_pending_in_a_transaction_are_unstable_until_it_ends(broker: Broker) -> None:
    """KIP-447: a consumer asking for stable offsets (require_stable, as transactional
    consumers do) is told UNSTABLE_OFFSET_COMMIT while a transaction holds offsets of the
    partition, so a new owner does not start from the offsets that transaction replaces."""
    source = topic_of(broker, 1)
    group = unique_name("stable")
    consumer = Consumer(
        {"bootstrap.servers": broker.bootstrap, "group.id": group, "enable.auto.commit": False}
    )
    consumer.subscribe([source])
    consumer.poll(5)  # joins the group
    producer = transactional(broker, unique_name("stable"))
    try:
        producer.begin_transaction()
        producer.send_offsets_to_transaction(
            [TopicPartition(source, 0, 7)], consumer.consumer_group_metadata(), TIMEOUT_S
        )
        assert offset_fetch(broker, group, source, require_stable=True) == (
            -1,
            UNSTABLE_OFFSET_COMMIT,
        )
        assert offset_fetch(broker, group, source, require_stable=False) == (-1, 0)
        producer.commit_transaction(TIMEOUT_S)
        assert offset_fetch(broker, group, source, require_stable=True) == (7, 0)
    finally:
        consumer.close()


def test_kafka_transactions_lists_and_describes_what_the_coordinator_serves(
    broker: Broker,
) -> None:
    """Kafka's own tool, through the Java admin client (FindCoordinator for a transactional
    id, ListTransactions, DescribeTransactions, DescribeProducers)."""
    topic = topic_of(broker, 1)
    transactional_id = unique_name("tool")
    producer = transactional(broker, transactional_id)
    producer.begin_transaction()
    producer.produce(topic, b"open", partition=0)
    producer.flush(TIMEOUT_S)
    tool = ("kafka-transactions", "--bootstrap-server", broker.bootstrap)
    listed = kafka_tool(*tool, "list")
    [line] = [row for row in listed.splitlines() if row.startswith(transactional_id)]
    assert line.split()[-1] == "Ongoing", listed
    described = kafka_tool(*tool, "describe", "--transactional-id", transactional_id)
    assert "Ongoing" in described and f"{topic}-0" in described, described
    producers = kafka_tool(*tool, "describe-producers", "--topic", topic, "--partition", "0")
    header, row = producers.strip().splitlines()[-2:]
    columns = dict(zip(header.split(), row.split(), strict=True))
    assert columns["CurrentTransactionStartOffset"] == "0", producers
    producer.commit_transaction(TIMEOUT_S)
    described = kafka_tool(*tool, "describe", "--transactional-id", transactional_id)
    assert "CompleteCommit" in described, described
