"""Replication quotas (KIP-73): the rate meter, the quota check, and which replicas a
throttled-replicas config names."""

from __future__ import annotations

import uuid

from odradek.broker.cluster.metadata_image import MetadataImage, TopicMetadata
from odradek.broker.cluster.partition import PartitionKey
from odradek.broker.cluster.replication_quota import (
    FOLLOWER_THROTTLED_REPLICAS,
    UNTHROTTLED,
    RateMeter,
    ReplicationQuota,
    throttled_replica,
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_meter_spreads_bytes_over_at_least_the_full_samples_of_its_window() -> None:
    clock = Clock()
    meter = RateMeter(samples=11, sample_s=1.0, clock=clock)
    meter.record(10_000)

    assert meter.rate() == 1_000  # one burst counts over 10 whole samples, not its instant

    for _ in range(20):
        clock.now += 1
        meter.record(5_000)
    assert meter.rate() == 5_000 * 11 / 10  # 11 samples of 5000 over the 10 s they span


def test_old_samples_leave_the_window() -> None:
    clock = Clock()
    meter = RateMeter(samples=2, sample_s=1.0, clock=clock)
    meter.record(10_000)
    clock.now += 2.0

    assert meter.rate() == 0.0


def test_the_quota_is_exceeded_only_above_its_configured_rate_read_at_each_check() -> None:
    clock = Clock()
    limit = [1_000]
    quota = ReplicationQuota(lambda: limit[0], samples=2, sample_s=1.0, clock=clock)
    quota.record(900)
    assert not quota.exceeded()
    quota.record(200)
    assert quota.exceeded()
    limit[0] = UNTHROTTLED  # lifting the throttle applies to the next check
    assert not quota.exceeded()


def test_a_throttled_replicas_config_names_partition_broker_pairs_or_every_replica() -> None:
    def image(listed: str | None) -> MetadataImage:
        configs = {} if listed is None else {FOLLOWER_THROTTLED_REPLICAS: listed}
        topic = TopicMetadata("t", uuid.uuid4(), (), configs=configs)
        return MetadataImage("c", 0, {}, {"t": topic})

    key = PartitionKey("t", 1)
    named = image("0:2, 1:3")
    assert throttled_replica(named, key, 3, FOLLOWER_THROTTLED_REPLICAS)
    assert not throttled_replica(named, key, 2, FOLLOWER_THROTTLED_REPLICAS)
    assert throttled_replica(image("*"), key, 7, FOLLOWER_THROTTLED_REPLICAS)
    assert not throttled_replica(image(None), key, 3, FOLLOWER_THROTTLED_REPLICAS)
    assert not throttled_replica(named, PartitionKey("other", 1), 3, FOLLOWER_THROTTLED_REPLICAS)
