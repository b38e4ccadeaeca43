"""Operations on a running cluster: reassignment under load, consumer-group
coordinator failover, and consumers fetching from the replica in their rack."""

from __future__ import annotations

import threading
import time

import pytest
from broker_process import unique_name
from cluster_harness import Cluster, ClusterFactory
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from kafka.admin import KafkaAdminClient
from kafka.structs import TopicPartition as KafkaTopicPartition
from replica_logs import assert_replicas_identical

RACK_AWARE_SELECTOR = "org.apache.kafka.common.replica.RackAwareReplicaSelector"


class BackgroundProducer:
    """acks=all idempotent writes of increasing numbers until stopped; records what was acked."""

    def __init__(self, bootstrap: str, topic: str) -> None:
        self._producer = Producer(
            {
                "bootstrap.servers": bootstrap,
                "acks": "all",
                "enable.idempotence": True,
                "linger.ms": 5,
                "log_level": 0,
            }
        )
        self._topic = topic
        self._stop = threading.Event()
        self.acked: list[bytes] = []
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _delivered(self, error: object, message: object) -> None:
        if error is None:
            self.acked.append(message.value())  # type: ignore[attr-defined]

    def _run(self) -> None:
        sequence = 0
        while not self._stop.is_set():
            self._producer.produce(self._topic, b"%d" % sequence, on_delivery=self._delivered)
            sequence += 1
            self._producer.poll(0.002)
        self._producer.flush(60)

    def stop(self) -> list[bytes]:
        self._stop.set()
        self._thread.join(timeout=90)
        return self.acked


def _read_all(cluster: Cluster, topic: str, partitions: int) -> list[bytes]:
    consumer = Consumer(
        {"bootstrap.servers": cluster.bootstrap, "group.id": unique_name("read"), "log_level": 0}
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    values: list[bytes] = []
    try:
        while (message := consumer.poll(5)) is not None:
            if message.error() is None:
                values.append(message.value())
    finally:
        consumer.close()
    return values


@pytest.mark.slow
def test_reassignment_moves_a_partition_to_other_brokers_under_load_without_loss(
    cluster_factory: ClusterFactory,
) -> None:
    cluster = cluster_factory(6)
    topic = cluster.create_topic(1, 3, {"min.insync.replicas": "2"})
    before = cluster.partition(topic, 0).replicas
    target = [b for b in range(6) if b not in before][:3]
    load = BackgroundProducer(cluster.bootstrap, topic)
    time.sleep(2)
    admin = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    try:
        admin.alter_partition_reassignments({KafkaTopicPartition(topic, 0): target})
        cluster.wait_until(
            lambda: (
                sorted(cluster.partition(topic, 0).replicas) == sorted(target)
                and not admin.list_partition_reassignments()
            ),
            "the reassignment completed",
        )
    finally:
        admin.close()
    time.sleep(1)
    acked = load.stop()
    assert len(acked) > 100
    cluster.wait_until(lambda: cluster.fully_replicated(topic), "the new replicas in sync")
    values = _read_all(cluster, topic, 1)
    assert len(values) == len(set(values)), "duplicates after the reassignment"
    assert set(acked) <= set(values), "acknowledged writes lost during the reassignment"
    assert_replicas_identical(cluster, topic, 1)
    for old in before:
        assert not (cluster.brokers[old].data_dir / f"{topic}-0").exists()


@pytest.mark.slow
def test_committed_offsets_survive_a_group_coordinator_failover(
    cluster_factory: ClusterFactory,
) -> None:
    cluster = cluster_factory(3)
    topic = cluster.create_topic(3, 3, {"min.insync.replicas": "2"})
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "log_level": 0})
    for index in range(300):
        producer.produce(topic, b"%d" % index, partition=index % 3)
    assert producer.flush(30) == 0
    group = unique_name("failover")
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "session.timeout.ms": 6000,
            "log_level": 0,
        }
    )
    consumer.subscribe([topic])
    seen = 0
    deadline = time.monotonic() + 60
    while seen < 150 and time.monotonic() < deadline:
        message = consumer.poll(1)
        if message is not None and message.error() is None:
            seen += 1
    consumer.commit(asynchronous=False)
    committed = {tp.partition: tp.offset for tp in consumer.committed(
        [TopicPartition(topic, p) for p in range(3)], timeout=10)}  # fmt: skip
    consumer.close()
    assert sum(offset for offset in committed.values() if offset >= 0) == seen

    described = AdminClient({"bootstrap.servers": cluster.bootstrap, "log_level": 0})
    coordinator = described.describe_consumer_groups([group])[group].result(30).coordinator.id
    cluster.kill(coordinator)
    survivors = ",".join(cluster.brokers[b].bootstrap for b in range(3) if b != coordinator)
    resumed = Consumer(
        {
            "bootstrap.servers": survivors,
            "group.id": group,
            "auto.offset.reset": "earliest",
            "enable.auto.commit": False,
            "log_level": 0,
        }
    )
    try:
        after = resumed.committed([TopicPartition(topic, p) for p in range(3)], timeout=30)
    finally:
        resumed.close()
    assert {tp.partition: tp.offset for tp in after} == committed


@pytest.mark.slow
def test_consumer_with_client_rack_fetches_from_the_replica_in_its_rack(
    cluster_factory: ClusterFactory,
) -> None:
    cluster = cluster_factory(
        3, racks=["a", "b", "c"], settings={"replica.selector.class": RACK_AWARE_SELECTOR}
    )
    topic = cluster.create_topic(1, 3)
    producer = Producer({"bootstrap.servers": cluster.bootstrap, "acks": "all", "log_level": 0})
    for _index in range(500):
        producer.produce(topic, b"x" * 1000, partition=0)
    assert producer.flush(30) == 0
    # The leader points a consumer elsewhere only at a replica that is in sync.
    cluster.wait_until(lambda: cluster.fully_replicated(topic), "every replica in sync")
    leader = cluster.leader_of(topic, 0)
    local = next(b for b in range(3) if b != leader)
    rack = "abc"[local]
    bytes_out_before = {b: _bytes_out(cluster, b, topic) for b in range(3)}
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "group.id": unique_name("rack"),
            "client.rack": rack,
            "log_level": 0,
        }
    )
    consumer.assign([TopicPartition(topic, 0, 0)])
    received = 0
    deadline = time.monotonic() + 60
    try:
        while received < 500 and time.monotonic() < deadline:
            message = consumer.poll(1)
            if message is not None and message.error() is None:
                received += 1
    finally:
        consumer.close()
    assert received == 500
    served = {b: _bytes_out(cluster, b, topic) - bytes_out_before[b] for b in range(3)}
    assert served[local] >= 500 * 1000, f"the replica in rack {rack} did not serve: {served}"
    assert served[leader] < 500 * 1000


def _bytes_out(cluster: Cluster, broker: int, topic: str) -> float:
    for line in cluster.brokers[broker].metrics_text().splitlines():
        if line.startswith("odradek_bytes_out_total{") and f'topic="{topic}"' in line:
            return float(line.rsplit(" ", 1)[1])
    return 0.0
