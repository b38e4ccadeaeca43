"""Kafka's client quotas on one broker (``ClientQuotaManager``,
``ClientRequestQuotaManager``, ``ControllerMutationQuotaManager``).

Each quota applies per broker to the clients that share it: the user and/or client id of
the entity that won the precedence (``client_quota.resolve``), as Kafka's metric tags.
Bytes (produce requests, fetch responses) and request time are measured over
``quota.window.num`` samples of ``quota.window.size.seconds``; a client over its quota is
told how long to back off, ``(rate - quota) / quota * window``, and its connection is not
read for that long. Controller mutations (partitions created or deleted) draw on a token
bucket of ``controller.quota.window.num * controller.quota.window.size.seconds`` seconds
of the rate, refilled at the rate; a strict request (CreateTopics v6+, DeleteTopics v5+,
CreatePartitions v3+) is refused THROTTLING_QUOTA_EXCEEDED while the bucket is empty.

With no quota of a kind in the metadata image nothing of that kind is measured.
"""

from __future__ import annotations

import contextvars
import enum
import time
from collections.abc import Callable, Iterator

from prometheus_client import Counter

from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.cluster.replication_quota import RateMeters
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.security.client_quota import (
    CONSUMER_BYTE_RATE,
    CONTROLLER_MUTATION_RATE,
    PRODUCER_BYTE_RATE,
    REQUEST_PERCENTAGE,
    resolve,
    user_of,
)

THROTTLING_QUOTA_EXCEEDED = "The throttling quota has been exceeded."


class QuotaType(enum.Enum):
    PRODUCE = PRODUCER_BYTE_RATE
    FETCH = CONSUMER_BYTE_RATE
    REQUEST = REQUEST_PERCENTAGE
    CONTROLLER_MUTATION = CONTROLLER_MUTATION_RATE

    @property
    def label(self) -> str:
        return self.name.lower()


Tags = tuple[str, str]  # (user, client id) sharing a quota; "" for a type not in the entity


class TokenBucket:
    """Kafka's ``TokenBucket``: starts full, ``burst`` tokens at most, refilled at ``rate``
    per second; recording may take it below zero."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._tokens = float("inf")
        self._updated = clock()

    def tokens(self, rate: float, burst: float) -> float:
        now = self._clock()
        self._tokens = min(burst, self._tokens + rate * (now - self._updated))
        self._updated = now
        return self._tokens

    def record(self, permits: float, rate: float, burst: float) -> float:
        self._tokens = self.tokens(rate, burst) - permits
        return self._tokens


class MutationQuota:
    """One request's controller mutation quota: ``record`` the partitions a topic creates
    or deletes before doing it; ``throttle_ms`` for the response."""

    def __init__(
        self, bucket: TokenBucket | None, rate: float, burst: float, strict: bool, metric: Counter
    ) -> None:
        self._bucket = bucket
        self._rate = rate
        self._burst = burst
        self._strict = strict
        self._metric = metric
        self._throttle_ms = 0

    def record(self, permits: int) -> None:
        bucket = self._bucket
        if bucket is None:
            return
        if self._strict:
            tokens = bucket.tokens(self._rate, self._burst)
            if tokens < 0:
                self._throttled(tokens)
                raise KafkaError(ErrorCode.throttling_quota_exceeded, THROTTLING_QUOTA_EXCEEDED)
            bucket.record(permits, self._rate, self._burst)
            return
        tokens = bucket.record(permits, self._rate, self._burst)
        if tokens < 0:
            self._throttled(tokens)

    def throttle_ms(self) -> int:
        return self._throttle_ms

    def _throttled(self, tokens: float) -> None:
        self._throttle_ms = round(-tokens / self._rate * 1000)
        self._metric.inc(self._throttle_ms / 1000)


# The mutation quota of the request being served (CreateTopics, DeleteTopics,
# CreatePartitions, Metadata's auto-creation), set around its handler.
current_mutation_quota: contextvars.ContextVar[MutationQuota | None] = contextvars.ContextVar(
    "current_mutation_quota", default=None
)


def record_mutations(partitions: int) -> None:
    """Count partitions about to be created or deleted against the requester's controller
    mutation quota; THROTTLING_QUOTA_EXCEEDED for a strict request over it."""
    quota = current_mutation_quota.get()
    if quota is not None:
        quota.record(partitions)


class ClientQuotaManager:
    def __init__(
        self,
        image: Callable[[], MetadataImage],
        throttle_time: Counter,
        samples: int = 11,
        sample_s: float = 1.0,
        mutation_samples: int = 11,
        mutation_sample_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._image = image
        self._throttle_time = {kind: throttle_time.labels(kind.label) for kind in QuotaType}
        self._samples = samples
        self._sample_s = sample_s
        self._mutation_burst_s = mutation_samples * mutation_sample_s
        self._clock = clock
        self._meters: RateMeters[tuple[QuotaType, Tags]] = RateMeters(samples, sample_s, clock)
        self._buckets: dict[Tags, TokenBucket] = {}
        self._resolved_for: MetadataImage | None = None
        self._kinds: frozenset[QuotaType] = frozenset()
        self._resolved: dict[tuple[QuotaType, str, str], tuple[float, Tags] | None] = {}

    def active(self, kind: QuotaType) -> bool:
        """Whether any entity sets a quota of ``kind``: else nothing of it is measured."""
        self._refresh()
        return kind in self._kinds

    def record(self, kind: QuotaType, principal: str, client_id: str | None, value: float) -> int:
        """Count ``value`` (bytes; request-percent seconds) against the client's quota; the
        throttle time in ms Kafka answers (0 within the quota)."""
        found = self._quota(kind, principal, client_id)
        if found is None:
            return 0
        limit, tags = found
        meter = self._meters[(kind, tags)]
        meter.record(value)
        total, window_s = meter.measure()
        rate = total / window_s
        if rate <= limit:
            return 0
        throttle_ms: int = round((rate - limit) / limit * window_s * 1000)
        if kind is QuotaType.REQUEST:  # ClientRequestQuotaManager bounds it by one sample
            throttle_ms = min(throttle_ms, round(self._sample_s * 1000))
        self._throttle_time[kind].inc(throttle_ms / 1000)
        return throttle_ms

    def unrecord(
        self, kind: QuotaType, principal: str, client_id: str | None, value: float
    ) -> None:
        """Take back a ``record`` whose response was not sent (a throttled fetch)."""
        found = self._quota(kind, principal, client_id)
        if found is not None:
            self._meters[(kind, found[1])].record(-value)

    def fetch_throttle_ms(self, principal: str, client_id: str | None, size: int) -> int:
        """Count a fetch response of ``size`` bytes; when it would go over the quota, the
        throttle time, and the response is not counted: Kafka sends an empty one instead."""
        throttle_ms = self.record(QuotaType.FETCH, principal, client_id, size)
        if throttle_ms:
            self.unrecord(QuotaType.FETCH, principal, client_id, size)
        return throttle_ms

    def window_bytes(self, kind: QuotaType, principal: str, client_id: str | None) -> int | None:
        """The most one response may carry without being throttled for certain (Kafka's
        ``getMaxValueInQuotaWindow``); None without a quota."""
        found = self._quota(kind, principal, client_id)
        if found is None:
            return None
        return int(found[0] * (self._samples - 1) * self._sample_s)

    def mutation_quota(self, principal: str, client_id: str | None, strict: bool) -> MutationQuota:
        kind = QuotaType.CONTROLLER_MUTATION
        found = self._quota(kind, principal, client_id)
        metric = self._throttle_time[kind]
        if found is None:
            return MutationQuota(None, 0.0, 0.0, strict, metric)
        rate, tags = found
        bucket = self._buckets.get(tags)
        if bucket is None:
            bucket = self._buckets[tags] = TokenBucket(self._clock)
        return MutationQuota(bucket, rate, rate * self._mutation_burst_s, strict, metric)

    def rates(self) -> Iterator[tuple[QuotaType, Tags, float]]:
        """Each metered client's current rate (bytes/s; percent), for the metrics."""
        for (kind, tags), meter in self._meters.items():
            total, window_s = meter.measure()
            yield kind, tags, total / window_s

    def _quota(
        self, kind: QuotaType, principal: str, client_id: str | None
    ) -> tuple[float, Tags] | None:
        self._refresh()
        if kind not in self._kinds:
            return None
        key = (kind, principal, client_id or "")
        if key not in self._resolved:
            quotas = self._image().client_quotas
            self._resolved[key] = resolve(quotas, user_of(principal), key[2], kind.value)
        return self._resolved[key]

    def _refresh(self) -> None:
        image = self._image()
        if image is self._resolved_for:
            return
        self._resolved_for = image
        self._resolved = {}
        self._kinds = frozenset(
            kind
            for kind in QuotaType
            if any(kind.value in values for values in image.client_quotas.values())
        )
