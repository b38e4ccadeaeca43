"""Kafka's replication quotas (KIP-73) during a reassignment: the throttled replica copies
at the configured rate, every other partition keeps replicating at full speed, and
lifting the throttle takes effect at once."""

from __future__ import annotations

import time

import pytest
from cluster_harness import Cluster, ClusterFactory
from confluent_kafka import Producer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ResourceType,
)
from kafka.admin import KafkaAdminClient
from kafka.structs import TopicPartition as KafkaTopicPartition

RATE = 1_000_000  # bytes/s, for the leader's and the follower's quota
BACKLOG = 12 * RATE
RECORD = b"x" * 100_000
TIMEOUT = 30


def log_bytes(cluster: Cluster, broker: int, topic: str) -> int:
    """Bytes of record batches a broker holds of ``topic``'s partition 0."""
    return sum(
        path.stat().st_size
        for path in (cluster.brokers[broker].data_dir / f"{topic}-0").glob("*.log")
    )


def set_configs(
    admin: AdminClient, kind: ResourceType, name: str, configs: dict[str, str | None]
) -> None:
    entries = [
        ConfigEntry(
            key,
            value,
            incremental_operation=(
                AlterConfigOpType.SET if value is not None else AlterConfigOpType.DELETE
            ),
        )
        for key, value in configs.items()
    ]
    resource = ConfigResource(kind, name, incremental_configs=entries)
    admin.incremental_alter_configs([resource])[resource].result(TIMEOUT)


def set_rates(admin: AdminClient, rate: str | None) -> None:
    """Both replication rates on every broker (None: remove them)."""
    for broker in ("0", "1", "2"):
        rates = {"leader.replication.throttled.rate": rate,
                 "follower.replication.throttled.rate": rate}  # fmt: skip
        set_configs(admin, ResourceType.BROKER, broker, rates)


@pytest.mark.slow
def test_a_throttled_reassignment_copies_at_the_rate_while_other_partitions_stay_in_sync(
    cluster_factory: ClusterFactory,
) -> None:
    cluster = cluster_factory(
        3, settings={"replica.lag.time.max.ms": "2000", "replication.quota.window.num": "2"}
    )
    moving = cluster.create_topic(1, 1, prefix="moving")
    others = cluster.create_topic(6, 3, {"min.insync.replicas": "2"}, prefix="others")
    leader = cluster.leader_of(moving, 0)
    target = next(b for b in range(3) if b != leader)
    producer = Producer(
        {
            "bootstrap.servers": cluster.bootstrap,
            "acks": "all",
            "linger.ms": 0,
            "message.max.bytes": 2_000_000,
        }
    )
    for _ in range(BACKLOG // len(RECORD)):
        producer.produce(moving, RECORD)
    assert producer.flush(TIMEOUT) == 0
    admin = AdminClient({"bootstrap.servers": cluster.bootstrap})
    set_rates(admin, str(RATE))
    set_configs(
        admin,
        ResourceType.TOPIC,
        moving,
        {
            "leader.replication.throttled.replicas": f"0:{leader}",
            "follower.replication.throttled.replicas": f"0:{target}",
        },
    )
    reassigner = KafkaAdminClient(bootstrap_servers=cluster.bootstrap)
    reassigner.alter_partition_reassignments({KafkaTopicPartition(moving, 0): [leader, target]})
    reassigner.close()

    # While it copies: acks=all writes to the other topic, one at a time, and their ISRs.
    started = time.monotonic()
    copied_at: list[tuple[float, int]] = []
    latencies: list[float] = []
    others_in_sync: list[bool] = []
    while time.monotonic() - started < 8:
        sent = time.monotonic()
        producer.produce(others, b"tick", partition=len(latencies) % 6)
        assert producer.flush(TIMEOUT) == 0
        latencies.append(time.monotonic() - sent)
        if not copied_at or time.monotonic() - copied_at[-1][0] >= 1:
            copied_at.append((time.monotonic(), log_bytes(cluster, target, moving)))
            others_in_sync.append(cluster.fully_replicated(others))
    (first_s, first), (last_s, last) = copied_at[1], copied_at[-1]
    rate = (last - first) / (last_s - first_s)
    lifted = time.monotonic()
    set_rates(admin, None)
    done_s = cluster.wait_until(
        lambda: target in cluster.partition(moving, 0).isr,
        "the moved replica in sync",
        timeout=TIMEOUT,
    )

    assert 0.6 * RATE <= rate <= 1.4 * RATE, f"copied at {rate:.0f} B/s under a {RATE} B/s quota"
    assert last < BACKLOG, "the whole backlog was copied while throttled"
    assert all(others_in_sync), f"another partition left the ISR: {others_in_sync}"
    assert sorted(latencies)[len(latencies) // 2] < 0.3, "other partitions replicated slowly"
    assert time.monotonic() - lifted < 3 and done_s < 2, "lifting the throttle was not at once"
    assert log_bytes(cluster, target, moving) == log_bytes(cluster, leader, moving)
