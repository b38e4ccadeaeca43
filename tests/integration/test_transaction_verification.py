"""KIP-890's check on real brokers, over the wire: a transactional batch sent after its
transaction ended (a late retry, a stray producer) is refused with INVALID_TXN_STATE instead
of opening a transaction no marker will ever close, which would hold every read_committed
reader of the partition back for good; so is a batch for a partition the transaction never
added. With transaction.partition.verification.enable=false the late batch hangs the
partition, as it does on Kafka before 3.6: the check is what prevents it. On a 3-broker
cluster the leader asks the coordinator on another broker (AddPartitionsToTxn v4)."""

from __future__ import annotations

import pytest
from broker_process import Broker, BrokerFactory, unique_name
from cluster_harness import ClusterFactory
from transaction_wire import (
    INVALID_TXN_STATE,
    NONE,
    Transaction,
    Wire,
    coordinator_of,
    create_topic,
    stable_and_end,
)

pytestmark = pytest.mark.slow


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
