"""A leader cut off from etcd and from its followers by a network partition.

Broker 0 reaches etcd, and is reached by its followers and clients, only
through TCP proxies the test cuts and heals. Cut off, it must not acknowledge
acks=all writes; the rest of the cluster elects a new leader and carries on;
healed, the old leader truncates what it appended alone and rejoins, and no
acknowledged write is lost.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from broker_process import unique_name
from cluster_harness import Cluster
from confluent_kafka import Consumer, Producer, TopicPartition
from kafka.record.default_records import DefaultRecordBatchBuilder
from kafka_wire import WireClient
from replica_logs import assert_replicas_identical
from tcp_proxy import TcpProxy, proxy_to

from odradek.cli.etcd_process import EtcdProcess

TOPIC_PARTITION = 0
REQUEST_TIMEOUT_MS = 3000


@pytest.fixture
def partitioned_cluster(
    etcd: EtcdProcess, tmp_path: Path
) -> Iterator[tuple[Cluster, TcpProxy, TcpProxy]]:
    """Three brokers; broker 0 talks to etcd and is reached only through proxies."""
    cluster = Cluster(tmp_path / "cluster", etcd, 3, settings={"cluster.name": unique_name("np")})
    victim = cluster.brokers[0]
    with (
        proxy_to("127.0.0.1", etcd.client_port) as to_etcd,
        proxy_to("127.0.0.1", victim.port) as to_victim,
    ):
        victim.settings["etcd.endpoints"] = f"http://{to_etcd.address}"
        victim.settings["advertised.listeners"] = f"PLAINTEXT://{to_victim.address}"
        try:
            yield cluster.start(), to_etcd, to_victim
        finally:
            cluster.close()


def _produce(cluster: Cluster, topic: str, values: range) -> list[bytes]:
    """acks=all through the brokers other than 0; returns the acknowledged values."""
    bootstrap = ",".join(cluster.brokers[node].bootstrap for node in (1, 2))
    producer = Producer(
        {
            "bootstrap.servers": bootstrap,
            "acks": "all",
            "enable.idempotence": True,
            "log_level": 0,
        }
    )
    acked: list[bytes] = []

    def delivered(error: object, message: object) -> None:
        if error is None:
            acked.append(message.value())  # type: ignore[attr-defined]

    for value in values:
        producer.produce(topic, b"%d" % value, partition=TOPIC_PARTITION, on_delivery=delivered)
    producer.flush(60)
    return acked


def _consume_all(cluster: Cluster, topic: str) -> list[bytes]:
    bootstrap = ",".join(cluster.brokers[node].bootstrap for node in (1, 2))
    consumer = Consumer(
        {"bootstrap.servers": bootstrap, "group.id": unique_name("check"), "log_level": 0}
    )
    consumer.assign([TopicPartition(topic, TOPIC_PARTITION, 0)])
    values: list[bytes] = []
    try:
        while (message := consumer.poll(5)) is not None:
            if message.error() is None:
                values.append(message.value())
    finally:
        consumer.close()
    return values


def _raw_batch(value: bytes) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2, compression_type=0, is_transactional=False, producer_id=-1,
        producer_epoch=-1, base_sequence=-1, batch_size=1 << 16,
    )  # fmt: skip
    builder.append(0, timestamp=None, key=None, value=value, headers=[])
    return bytes(builder.build())


@pytest.mark.slow
def test_partitioned_leader_is_fenced_replaced_and_rejoins_without_loss(
    partitioned_cluster: tuple[Cluster, TcpProxy, TcpProxy],
) -> None:
    cluster, to_etcd, to_victim = partitioned_cluster
    topic = cluster.create_topic(1, 3, {"min.insync.replicas": "2"})
    cluster.wait_until(lambda: cluster.leader_of(topic, TOPIC_PARTITION) == 0, "broker 0 leads")
    acked = _produce(cluster, topic, range(0, 200))
    assert len(acked) == 200

    to_etcd.cut()
    to_victim.cut()
    # A client that still reaches the old leader directly gets no acks=all acknowledgement.
    with WireClient.to(cluster.brokers[0].bootstrap, timeout=30) as wire:
        result = wire.produce(topic, TOPIC_PARTITION, _raw_batch(b"lonely"), acks=-1)
    assert result.error_code.value != 0, "the cut-off leader acknowledged an acks=all write"

    cluster.wait_until(
        lambda: cluster.state(via=1).partitions[0].leader in (1, 2),
        "a new leader on the other side",
    )
    acked += _produce(cluster, topic, range(200, 400))

    to_etcd.heal()
    to_victim.heal()
    cluster.wait_until(lambda: cluster.fully_replicated(topic), "broker 0 back in the ISR")
    values = _consume_all(cluster, topic)
    assert b"lonely" not in values
    assert sorted(set(values)) == sorted(acked), "acknowledged writes lost or duplicated"
    assert len(values) == len(set(values))
    assert_replicas_identical(cluster, topic, 1)
