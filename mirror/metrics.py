"""The mirror's Prometheus metrics, in a registry of its own."""

from __future__ import annotations

import time
from typing import NamedTuple

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300)


class TopicMetrics(NamedTuple):
    """The per-topic children, looked up once per topic rather than per record."""

    records: Counter
    bytes: Counter
    latency: Histogram

    def mirrored(self, size: int, timestamp_ms: int) -> None:
        self.records.inc()
        self.bytes.inc(size)
        if timestamp_ms > 0:
            self.latency.observe(max(0.0, time.time() - timestamp_ms / 1000))


class MirrorMetrics:
    """Counters per source topic; ``topic`` labels are source topic names."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.records = Counter(
            "odradek_mirror_records",
            "Records mirrored (acknowledged by the target)",
            ["topic"],
            registry=r,
        )
        self.bytes = Counter(
            "odradek_mirror_bytes", "Key and value bytes mirrored", ["topic"], registry=r
        )
        self.skipped = Counter(
            "odradek_mirror_records_skipped",
            "Records not mirrored because they came from the target (loop prevention)",
            ["topic"],
            registry=r,
        )
        self.latency = Histogram(
            "odradek_mirror_replication_latency_seconds",
            "Source record timestamp to target acknowledgement",
            ["topic"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.lag = Gauge(
            "odradek_mirror_lag_records",
            "Source records not yet mirrored, over the partitions this process owns",
            ["topic"],
            registry=r,
        )
        self.errors = Counter(
            "odradek_mirror_errors",
            "Failures by kind (produce, commit, topic_sync, checkpoint)",
            ["kind"],
            registry=r,
        )
        self.queue = Gauge(
            "odradek_mirror_queue_records", "Records waiting in the queue", registry=r
        )
        self.partitions = Gauge(
            "odradek_mirror_assigned_partitions",
            "Source partitions this process mirrors",
            registry=r,
        )
        self.topics = Gauge(
            "odradek_mirror_topics", "Source topics selected for mirroring", registry=r
        )
        self.checkpoints = Counter(
            "odradek_mirror_checkpoints", "Consumer group checkpoints written", registry=r
        )
        self.group_offsets_synced = Counter(
            "odradek_mirror_group_offsets_synced",
            "Translated offsets committed into the target's consumer groups",
            registry=r,
        )
        self.commits = Counter(
            "odradek_mirror_source_commits",
            "Source offset commits after target acknowledgement",
            registry=r,
        )

    def topic(self, topic: str) -> TopicMetrics:
        return TopicMetrics(
            self.records.labels(topic), self.bytes.labels(topic), self.latency.labels(topic)
        )
