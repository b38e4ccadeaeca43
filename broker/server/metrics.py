"""The broker's Prometheus metrics (``odradek_*``), in one registry per broker."""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5)

# topic, partition, size, segments, start offset, end offset, high watermark
PartitionSample = tuple[str, int, int, int, int, int, int]


class _LogCollector(Collector):
    """Per-partition log gauges, read at scrape time rather than kept up to date."""

    def __init__(self, samples: Callable[[], Iterable[PartitionSample]]) -> None:
        self._samples = samples

    def collect(self) -> Iterator[GaugeMetricFamily]:
        labels = ["topic", "partition"]
        size = GaugeMetricFamily(
            "odradek_log_size_bytes", "Bytes in the partition's log", labels=labels
        )
        segments = GaugeMetricFamily(
            "odradek_log_segments", "Segments in the partition's log", labels=labels
        )
        start = GaugeMetricFamily("odradek_log_start_offset", "Log start offset", labels=labels)
        end = GaugeMetricFamily("odradek_log_end_offset", "Log end offset", labels=labels)
        high = GaugeMetricFamily("odradek_high_watermark", "High watermark", labels=labels)
        for topic, partition, size_bytes, count, start_offset, end_offset, hw in self._samples():
            key = [topic, str(partition)]
            size.add_metric(key, size_bytes)
            segments.add_metric(key, count)
            start.add_metric(key, start_offset)
            end.add_metric(key, end_offset)
            high.add_metric(key, hw)
        yield from (size, segments, start, end, high)


class CertificateCollector(Collector):
    """When each TLS listener's certificate expires, as it serves it now (reloaded files
    included)."""

    def __init__(self, expiries: Callable[[], Iterable[tuple[str, datetime.datetime]]]) -> None:
        self._expiries = expiries

    def collect(self) -> Iterator[GaugeMetricFamily]:
        expiry = GaugeMetricFamily(
            "odradek_tls_certificate_expiry_timestamp_seconds",
            "When the certificate a TLS listener presents expires (Unix time)",
            labels=["listener"],
        )
        for listener, expires_at in self._expiries():
            expiry.add_metric([listener], expires_at.timestamp())
        yield expiry


class BrokerMetrics:
    def __init__(self, partition_samples: Callable[[], Iterable[PartitionSample]]) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "odradek_requests", "Requests handled", ["api"], registry=self.registry
        )
        self.request_errors = Counter(
            "odradek_request_errors",
            "Requests that closed their connection",
            ["api"],
            registry=self.registry,
        )
        self.request_latency = Histogram(
            "odradek_request_latency_seconds",
            "Time from request read to response written",
            ["api"],
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.bytes_in = Counter(
            "odradek_bytes_in", "Record bytes appended", ["topic"], registry=self.registry
        )
        self.records_in = Counter(
            "odradek_records_in", "Records appended", ["topic"], registry=self.registry
        )
        self.records_out = Counter(
            "odradek_records_out",
            "Records (by offset) sent to fetchers",
            ["topic"],
            registry=self.registry,
        )
        self.bytes_out = Counter(
            "odradek_bytes_out", "Record bytes sent to fetchers", ["topic"], registry=self.registry
        )
        self.connections = Gauge(
            "odradek_connections", "Open client connections", registry=self.registry
        )
        self.connections_refused = Counter(
            "odradek_connections_refused",
            "Connections closed by a connection limit (max.connections.per.ip,"
            " connection_creation_rate; max.connections: closed for an inter-broker one)",
            ["limit"],
            registry=self.registry,
        )
        self.connections_idle_closed = Counter(
            "odradek_connections_idle_closed",
            "Connections closed after connections.max.idle.ms without a request arriving"
            " or a response being taken by the client",
            registry=self.registry,
        )
        self.request_queue_size = Gauge(
            "odradek_request_queue_size",
            "Requests read and not yet answered, those waiting in a purgatory aside"
            " (at most queued.max.requests)",
            registry=self.registry,
        )
        self.request_queue_bytes = Gauge(
            "odradek_request_queue_bytes",
            "Bytes of request frames being read or read and not yet answered, those waiting"
            " in a purgatory aside (below queued.max.request.bytes plus one frame)",
            registry=self.registry,
        )
        self.fetch_sessions = Gauge(
            "odradek_fetch_sessions",
            "Incremental fetch sessions cached (KIP-227; Kafka's NumIncrementalFetchSessions)",
            registry=self.registry,
        )
        self.fetch_session_partitions = Gauge(
            "odradek_fetch_session_partitions",
            "Partitions in the cached fetch sessions (NumIncrementalFetchPartitionsCached)",
            registry=self.registry,
        )
        self.fetch_session_evictions = Counter(
            "odradek_fetch_session_evictions",
            "Fetch sessions evicted to make room for new ones",
            registry=self.registry,
        )
        self.request_queue_time = Histogram(
            "odradek_request_queue_time_seconds",
            "Time a request read waited for a slot of queued.max.requests",
            buckets=_LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.malformed_frames = Counter(
            "odradek_malformed_frames", "Frames that could not be decoded", registry=self.registry
        )
        self.authentications = Counter(
            "odradek_authentications",
            "SASL authentications and TLS handshakes (mechanism TLS) by listener, mechanism"
            " and result",
            ["listener", "mechanism", "result"],
            registry=self.registry,
        )
        self.authorization_denials = Counter(
            "odradek_authorization_denials",
            "Operations on a resource a request asked for and the authorizer denied",
            ["resource_type"],
            registry=self.registry,
        )
        self.throttle_time = Counter(
            "odradek_throttle_time_seconds",
            "Time clients were throttled for by client quotas, by quota type",
            ["type"],
            registry=self.registry,
        )
        self.registry.register(_LogCollector(partition_samples))

    def fetch_sessions_changed(self, sessions: int, partitions: int, evicted: int) -> None:
        self.fetch_sessions.set(sessions)
        self.fetch_session_partitions.set(partitions)
        if evicted:
            self.fetch_session_evictions.inc(evicted)
