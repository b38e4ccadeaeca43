"""Transaction version 2 (KIP-890 part 2) on real brokers. Over the wire: a producer of
version 2 writes (Produce v12) and commits offsets (TxnOffsetCommit v5) without adding
partitions, each EndTxn v5 answers with a bumped epoch, a retry of it gets the same answer,
and a late batch of a finished transaction is fenced. With Kafka's own tools: the Java
client finds the feature finalized, runs transactions across a 3-broker cluster with it,
and Kafka's log decoder reads the coordinator's records as version 2's."""

from __future__ import annotations

import datetime
import re
import time

import pytest
from broker_process import Broker, unique_name
from cluster_harness import ClusterFactory
from confluent_kafka import Consumer, TopicPartition
from kafka_tools import kafka_tool
from test_transactions import read_committed
from transaction_wire import (
    INVALID_PRODUCER_EPOCH,
    NONE,
    Transaction,
    Wire,
    coordinator_of,
    create_topic,
    stable_and_end,
)

from odradek.broker.transaction.coordinator import partition_for_transactional_id

pytestmark = pytest.mark.slow

PRODUCE_V2, END_TXN_V2, TXN_OFFSET_COMMIT_V2 = 12, 5, 5
TXN_OFFSET_COMMIT = 28
TRANSACTION_STATE_PARTITIONS = 50


def late_batch(transaction: Transaction, leader: Wire, topic: str, old: tuple[int, int]) -> int:
    """A batch of the producer's finished transaction (its old epoch) arriving now."""
    current, sequences = transaction.producer, dict(transaction.sequences)
    transaction.producer, transaction.sequences = old, {(topic, 0): 1}
    try:
        return transaction.produce(leader, topic, 0, PRODUCE_V2)
    finally:
        transaction.producer, transaction.sequences = current, sequences


def test_a_version_2_producer_adds_no_partitions_and_each_end_bumps_its_epoch(
    broker: Broker,
) -> None:
    topic = create_topic(broker.bootstrap, partitions=2)
    wire = Wire(broker.bootstrap)
    transaction = Transaction(wire, unique_name("v2"))
    first = transaction.producer

    for partition in (0, 1):
        assert transaction.produce(wire, topic, partition, PRODUCE_V2) == NONE
    described = transaction.describe()
    assert described.transaction_state == "Ongoing"
    assert sorted(p for t in described.topics for p in t.partitions) == [0, 1]
    assert stable_and_end(wire, topic, 0) == (0, 1)  # open: held back

    transaction.end(commit=True, version=END_TXN_V2)
    assert transaction.producer == (first[0], first[1] + 1)
    assert stable_and_end(wire, topic, 0) == (2, 2)  # the record and its marker
    retried = transaction.end_request(True, END_TXN_V2, producer=first)
    assert retried.error_code.value == NONE
    assert (int(retried.producer_id), int(retried.producer_epoch)) == transaction.producer

    assert late_batch(transaction, wire, topic, first) == INVALID_PRODUCER_EPOCH
    assert stable_and_end(wire, topic, 0) == (2, 2)  # nothing opened, nothing held back

    assert transaction.produce(wire, topic, 0, PRODUCE_V2) == NONE
    transaction.end(commit=False, version=END_TXN_V2)
    assert transaction.producer == (first[0], first[1] + 2)
    transaction.end(commit=False, version=END_TXN_V2)  # an abort with nothing written
    assert transaction.producer == (first[0], first[1] + 3)
    assert stable_and_end(wire, topic, 0) == (4, 4)
    assert read_committed(broker.bootstrap, topic) == ["x", "x"]  # the committed two


def test_offsets_join_a_version_2_transaction_without_add_offsets(broker: Broker) -> None:
    topic = create_topic(broker.bootstrap, partitions=1)
    group = unique_name("group")
    wire = Wire(broker.bootstrap)
    transaction = Transaction(wire, unique_name("v2-offsets"))

    def commit_offset(offset: int) -> None:
        answer = wire.until_settled(
            TXN_OFFSET_COMMIT, TXN_OFFSET_COMMIT_V2, transactional_id=transaction.id,
            group_id=group, producer_id=transaction.producer[0],
            producer_epoch=transaction.producer[1], generation_id=-1, member_id="",
            topics=[{"name": topic, "partitions": [{
                "partition_index": 0, "committed_offset": offset, "committed_leader_epoch": -1,
            }]}],
        )  # fmt: skip
        assert answer.topics[0].partitions[0].error_code.value == NONE, answer

    def committed() -> int:
        consumer = Consumer({"bootstrap.servers": broker.bootstrap, "group.id": group})
        try:
            [found] = consumer.committed([TopicPartition(topic, 0)], timeout=30)
        finally:
            consumer.close()
        return int(found.offset)

    commit_offset(7)
    assert "__consumer_offsets" in {t.topic for t in transaction.describe().topics}
    transaction.end(commit=True, version=END_TXN_V2)
    assert committed() == 7
    commit_offset(9)
    transaction.end(commit=False, version=END_TXN_V2)
    assert committed() == 7


def test_the_java_client_runs_version_2_transactions_across_brokers(
    cluster_factory: ClusterFactory,
) -> None:
    cluster = cluster_factory(3)
    topic = cluster.create_topic(partitions=6, prefix="java-v2")
    transactional_id = unique_name("perf")
    server = ("--bootstrap-server", cluster.bootstrap)

    features = kafka_tool("kafka-features", *server, "describe")
    assert re.search(
        r"Feature: transaction.version\s+SupportedMinVersion: 0\s+SupportedMaxVersion: 2\s+"
        r"FinalizedVersionLevel: 2",
        features,
    ), features
    sent = kafka_tool(
        "kafka-producer-perf-test", "--topic", topic, "--num-records", "3000",
        "--record-size", "100", "--throughput", "1000", "--transactional-id", transactional_id,
        "--transaction-duration-ms", "200", "--producer-props",
        f"bootstrap.servers={cluster.bootstrap}", "acks=all",
    )  # fmt: skip
    assert re.search(r"^3000 records sent", sent, re.MULTILINE), sent
    values = read_committed(cluster.bootstrap, topic, partitions=6)
    assert len(values) == 3000

    # each transaction ended with a bumped epoch: the producer's epoch counts them
    producers = kafka_tool(
        "kafka-transactions", *server, "describe-producers", "--topic", topic, "--partition", "0"
    )
    [row] = producers.strip().splitlines()[1:]
    # 3000 records at 1000/s in transactions of 200 ms: 15, as few as one when a slow start
    # (the JVM, initTransactions) lets the perf test's throttler send them in a catch-up
    # burst (a loaded run saw 2); an epoch that never moved (transaction version 1) stays 0
    assert int(row.split()[1]) >= 1

    # the coordinator wrote Kafka's version 1 records of a version 2 client
    coordinator = coordinator_of(Wire(cluster.brokers[0].bootstrap), transactional_id)
    index = partition_for_transactional_id(transactional_id, TRANSACTION_STATE_PARTITIONS)
    segments = sorted(
        (cluster.brokers[coordinator].data_dir / f"__transaction_state-{index}").glob("*.log")
    )
    decoded = kafka_tool(
        "kafka-dump-log", "--transaction-log-decoder", "--files", ",".join(map(str, segments))
    )
    ours = [
        line for line in decoded.splitlines() if f'"transactionalId":"{transactional_id}"' in line
    ]
    complete_commit = [line for line in ours if '"transactionStatus":4,' in line]
    assert len(complete_commit) >= 5, decoded
    assert all('"clientTransactionVersion":2' in line for line in complete_commit), ours


def test_timeout_of_a_version_2_transaction_lets_its_producer_abort(broker: Broker) -> None:
    topic = create_topic(broker.bootstrap, partitions=1)
    wire = Wire(broker.bootstrap)
    transaction = Transaction(
        wire, unique_name("v2-timeout"), timeout=datetime.timedelta(milliseconds=500)
    )
    first = transaction.producer
    assert transaction.produce(wire, topic, 0, PRODUCE_V2) == NONE
    transaction.wait_complete()  # aborted by the coordinator when it timed out
    assert stable_and_end(wire, topic, 0) == (2, 2)
    assert late_batch(transaction, wire, topic, first) == INVALID_PRODUCER_EPOCH
    transaction.end(commit=False, version=END_TXN_V2)  # the producer's abort is a retry
    assert transaction.producer == (first[0], first[1] + 1)


def test_a_first_batch_waits_on_the_broker_while_the_last_transaction_completes(
    cluster_factory: ClusterFactory,
) -> None:
    """A Produce v12 sent as soon as EndTxn answered: the producer's previous transaction
    is still writing its markers (the follower of its partition is stopped: a marker waits
    until the follower leaves the ISR), so its coordinator cannot add the partition yet
    (CONCURRENT_TRANSACTIONS). The leader asks again until it can, within
    add.partitions.to.txn.retry.backoff.max.ms, instead of sending the client away."""
    cluster = cluster_factory(
        brokers=2,
        settings={
            "transaction.state.log.replication.factor": "1",  # the coordinator's own writes
            "add.partitions.to.txn.retry.backoff.max.ms": "20000",
        },
    )
    transactional_id = unique_name("completing")
    coordinator_id = coordinator_of(Wire(cluster.brokers[0].bootstrap), transactional_id)
    topic = cluster.create_topic(4, 2, prefix="completing")
    [partition, *_] = [p for p in range(4) if cluster.leader_of(topic, p) == coordinator_id]
    coordinator = Wire(cluster.brokers[coordinator_id].bootstrap)
    transaction = Transaction(coordinator, transactional_id)
    assert transaction.produce(coordinator, topic, partition, PRODUCE_V2) == NONE

    cluster.pause(1 - coordinator_id)
    try:
        ended = transaction.end_request(True, END_TXN_V2)
        assert ended.error_code.value == NONE, ended
        transaction.producer = (int(ended.producer_id), int(ended.producer_epoch))
        transaction.sequences.clear()
        assert transaction.describe().transaction_state == "PrepareCommit"
        started = time.monotonic()
        assert transaction.produce(coordinator, topic, partition, PRODUCE_V2) == NONE
        waited = time.monotonic() - started
    finally:
        cluster.resume(1 - coordinator_id)
    assert transaction.describe().transaction_state == "Ongoing"
    assert waited > 0.5, f"answered in {waited:.3f} s: the markers were not being written"
    transaction.end(commit=True, version=END_TXN_V2)
    assert stable_and_end(coordinator, topic, partition) == (4, 4)
