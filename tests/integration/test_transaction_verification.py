"""KIP-890's check on real brokers, over the wire: a transactional batch sent after its
transaction ended (a late retry, a stray producer) is refused with INVALID_TXN_STATE instead
of opening a transaction no marker will ever close, which would hold every read_committed
reader of the partition back for good; so is a batch for a partition the transaction never
added. With transaction.partition.verification.enable=false the late batch hangs the
partition, as it does on Kafka before 3.6: the check is what prevents it. On a 3-broker
cluster the leader asks the coordinator on another broker (AddPartitionsToTxn v4)."""

from __future__ import annotations

import datetime
import time
from typing import Any

import pytest
from acl_wire import filled
from broker_process import Broker, BrokerFactory, unique_name
from cluster_harness import ClusterFactory
from confluent_kafka.admin import AdminClient, NewTopic  # type: ignore[attr-defined]
from kafka_wire import WireClient, build_batch, load_request_schema

from odradek.broker.protocol.entity_builder import build_entity

pytestmark = pytest.mark.slow

PRODUCE, LIST_OFFSETS, FIND_COORDINATOR, INIT_PRODUCER_ID = 0, 2, 10, 22
ADD_PARTITIONS_TO_TXN, END_TXN, DESCRIBE_TRANSACTIONS = 24, 26, 65
NONE, INVALID_TXN_STATE = 0, 48
RETRIABLE = {14, 15, 16, 51}  # coordinator loading / not available / not coordinator, concurrent
READ_COMMITTED = 1


class Wire:
    """Requests written as dicts of the fields that matter (the rest neutral)."""

    def __init__(self, bootstrap: str) -> None:
        self.client = WireClient.to(bootstrap)

    def call(self, api_key: int, version: int, **fields: Any) -> Any:
        schema = load_request_schema(api_key, version)
        return self.client.call(api_key, version, build_entity(schema, filled(schema, fields)))

    def until_settled(self, api_key: int, version: int, **fields: Any) -> Any:
        """The answer once the coordinator is loaded and idle."""
        deadline = time.monotonic() + 20
        while True:
            answer = self.call(api_key, version, **fields)
            code = getattr(answer, "error_code", None)
            if code is None or code.value not in RETRIABLE or time.monotonic() > deadline:
                return answer
            time.sleep(0.1)


class Transaction:
    def __init__(self, coordinator: Wire, transactional_id: str) -> None:
        self.coordinator = coordinator
        self.id = transactional_id
        assert coordinator_of(coordinator, transactional_id) >= 0  # makes __transaction_state
        answer = coordinator.until_settled(
            INIT_PRODUCER_ID, 4, transactional_id=transactional_id,
            transaction_timeout=datetime.timedelta(minutes=1), producer_id=-1, producer_epoch=-1,
        )  # fmt: skip
        assert answer.error_code.value == NONE, answer
        self.producer = (int(answer.producer_id), int(answer.producer_epoch))
        self.sequences: dict[tuple[str, int], int] = {}

    def add(self, topic: str, partition: int) -> None:
        answer = self.coordinator.until_settled(
            ADD_PARTITIONS_TO_TXN, 3, v3_and_below_transactional_id=self.id,
            v3_and_below_producer_id=self.producer[0],
            v3_and_below_producer_epoch=self.producer[1],
            v3_and_below_topics=[{"name": topic, "partitions": [partition]}],
        )  # fmt: skip
        [result] = answer.results_by_topic_v3_and_below[0].results_by_partition
        assert result.partition_error_code.value == NONE, answer

    def produce(self, leader: Wire, topic: str, partition: int) -> int:
        sequence = self.sequences.get((topic, partition), 0)
        batch = build_batch([b"x"], producer=(*self.producer, sequence), transactional=True)
        answer = leader.call(
            PRODUCE, 9, transactional_id=self.id, acks=-1, timeout=datetime.timedelta(seconds=10),
            topic_data=[{"name": topic, "partition_data": [{"index": partition,
                                                            "records": bytes(batch)}]}],
        )  # fmt: skip
        code = int(answer.responses[0].partition_responses[0].error_code.value)
        if code == NONE:
            self.sequences[(topic, partition)] = sequence + 1
        return code

    def end(self, commit: bool) -> None:
        answer = self.coordinator.until_settled(
            END_TXN, 3, transactional_id=self.id, producer_id=self.producer[0],
            producer_epoch=self.producer[1], committed=commit,
        )  # fmt: skip
        assert answer.error_code.value == NONE, answer
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # until the markers are written
            described = self.coordinator.call(DESCRIBE_TRANSACTIONS, 0, transactional_ids=[self.id])
            if described.transaction_states[0].transaction_state.startswith("Complete"):
                return
            time.sleep(0.05)
        raise AssertionError("the transaction did not complete")


def coordinator_of(wire: Wire, transactional_id: str) -> int:
    """FindCoordinator for a transactional id: its coordinator's node id."""
    found = wire.until_settled(FIND_COORDINATOR, 3, key_type=1, key=transactional_id)
    assert found.error_code.value == NONE, found
    return int(found.node_id)


def stable_and_end(leader: Wire, topic: str, partition: int) -> tuple[int, int]:
    """(last stable offset, log end offset) of the partition."""
    ends = []
    for isolation in (READ_COMMITTED, 0):
        answer = leader.call(
            LIST_OFFSETS, 7, replica_id=-1, isolation_level=isolation,
            topics=[{"name": topic, "partitions": [{"partition_index": partition,
                                                    "current_leader_epoch": -1,
                                                    "timestamp": -1}]}],
        )  # fmt: skip
        ends.append(int(answer.topics[0].partitions[0].offset))
    return ends[0], ends[1]


def create_topic(bootstrap: str, partitions: int, replication: int = 1) -> str:
    name = unique_name("verified")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(name, partitions, replication)])[name].result(30)
    return name


def late_batch_after_abort(coordinator: Wire, leader: Wire, topic: str) -> int:
    """A transaction writes to partition 0 and aborts; then its producer sends one more
    batch there without adding the partition again. The Produce answer's code."""
    transaction = Transaction(coordinator, unique_name("late"))
    transaction.add(topic, 0)
    assert transaction.produce(leader, topic, 0) == NONE
    transaction.end(commit=False)
    return transaction.produce(leader, topic, 0)


def test_a_late_batch_is_refused_and_the_partition_stays_readable(broker: Broker) -> None:
    wire = Wire(broker.bootstrap)
    topic = create_topic(broker.bootstrap, 2)
    assert late_batch_after_abort(wire, wire, topic) == INVALID_TXN_STATE
    stable, end = stable_and_end(wire, topic, 0)
    assert stable == end == 2  # the aborted record and its marker; nothing open

    # a batch for a partition the transaction never added
    transaction = Transaction(wire, unique_name("stray"))
    transaction.add(topic, 0)
    assert transaction.produce(wire, topic, 1) == INVALID_TXN_STATE
    assert transaction.produce(wire, topic, 0) == NONE
    transaction.end(commit=True)
    assert stable_and_end(wire, topic, 1) == (0, 0)


def test_without_the_check_a_late_batch_hangs_the_partition(
    broker_factory: BrokerFactory,
) -> None:
    broker = broker_factory(start=False)
    broker.settings["transaction.partition.verification.enable"] = "false"
    broker.start()
    wire = Wire(broker.bootstrap)
    topic = create_topic(broker.bootstrap, 1)
    assert late_batch_after_abort(wire, wire, topic) == NONE
    stable, end = stable_and_end(wire, topic, 0)
    assert (stable, end) == (2, 3)  # the late batch opened a transaction nothing will end


def test_a_leader_asks_the_coordinator_on_another_broker(cluster_factory: ClusterFactory) -> None:
    cluster = cluster_factory(brokers=3)
    topic = cluster.create_topic(3, 1, prefix="verified")
    transactional_id = unique_name("remote")
    coordinator_id = coordinator_of(Wire(cluster.brokers[0].bootstrap), transactional_id)
    partition = next(p for p in range(3) if cluster.leader_of(topic, p) != coordinator_id)
    leader = Wire(cluster.brokers[cluster.leader_of(topic, partition)].bootstrap)
    coordinator = Wire(cluster.brokers[coordinator_id].bootstrap)
    transaction = Transaction(coordinator, transactional_id)
    transaction.add(topic, partition)
    assert transaction.produce(leader, topic, partition) == NONE
    transaction.end(commit=False)
    assert transaction.produce(leader, topic, partition) == INVALID_TXN_STATE
    stable, end = stable_and_end(leader, topic, partition)
    assert stable == end == 2
