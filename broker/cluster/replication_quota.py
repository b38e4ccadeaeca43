"""Kafka's replication quotas (KIP-73): a leader's and a follower's bytes/s for throttled
replicas.

``leader.replication.throttled.rate`` and ``follower.replication.throttled.rate``
(dynamic broker configs) cap the replication traffic of the replicas a topic lists in
``leader.replication.throttled.replicas`` / ``follower.replication.throttled.replicas``
(``partition:broker`` pairs, or ``*``). Only replicas out of the ISR are held back, and
only by leaving their partition out of a fetch (follower) or of a fetch response
(leader) while the measured rate is over the quota: nothing else waits, and a lifted
or raised quota applies to the next fetch.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.cluster.partition import PartitionKey

UNTHROTTLED = 2**63 - 1
K = TypeVar("K")


LEADER_THROTTLED_REPLICAS = "leader.replication.throttled.replicas"
FOLLOWER_THROTTLED_REPLICAS = "follower.replication.throttled.replicas"


def throttled_replica(image: MetadataImage, key: PartitionKey, broker: int, config: str) -> bool:
    """Whether the topic's throttled-replicas ``config`` (``partition:broker`` pairs, or
    ``*``) names this broker's replica of ``key``."""
    topic = image.topics.get(key.topic)
    listed = topic.configs.get(config) if topic is not None else None
    if not listed:
        return False
    wanted = f"{key.partition}:{broker}"
    return any(item.strip() in ("*", wanted) for item in listed.split(","))


class RateMeter:
    """Bytes per second over the last ``samples`` samples of ``sample_s`` seconds, as
    Kafka's Rate measures them: the window is the samples recorded so far, and at least
    ``samples - 1`` whole ones (so a quiet meter does not let a burst through at once)."""

    def __init__(
        self, samples: int, sample_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._count = samples
        self._sample_s = sample_s
        self._clock = clock
        self._samples: deque[list[float]] = deque()  # [start, bytes], oldest first

    def record(self, size: float) -> None:
        now = self._clock()
        self._expire(now)
        if not self._samples or now - self._samples[-1][0] >= self._sample_s:
            self._samples.append([now, 0.0])
        self._samples[-1][1] += size

    def rate(self) -> float:
        now = self._clock()
        self._expire(now)
        if not self._samples:
            return 0.0
        total = sum(size for _, size in self._samples)
        window = max(now - self._samples[0][0], (self._count - 1) * self._sample_s, 1e-3)
        return total / window

    def measure(self) -> tuple[float, float]:
        """(what the live samples hold, the window they span in seconds) as Kafka's
        ``Rate.windowSize`` counts it for client quotas: the elapsed time since the oldest
        sample, made up to at least ``samples - 1`` whole samples."""
        now = self._clock()
        self._expire(now)
        minimum = (self._count - 1) * self._sample_s
        if not self._samples:
            return 0.0, max(minimum, 1e-3)
        elapsed = now - self._samples[0][0]
        whole = int(elapsed // self._sample_s)
        if whole < self._count - 1:
            elapsed += (self._count - 1 - whole) * self._sample_s
        return sum(size for _, size in self._samples), max(elapsed, 1e-3)

    def idle(self) -> bool:
        """Nothing recorded in the window: the meter can be forgotten."""
        self._expire(self._clock())
        return not self._samples

    def _expire(self, now: float) -> None:
        while self._samples and now - self._samples[0][0] >= self._count * self._sample_s:
            self._samples.popleft()


class RateMeters(Generic[K]):
    """A RateMeter per key (a client, an address), made on first use; every
    ``FORGET_IDLE_AFTER`` new ones, the idle ones are forgotten."""

    FORGET_IDLE_AFTER = 1024

    def __init__(
        self, samples: int, sample_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._samples = samples
        self._sample_s = sample_s
        self._clock = clock
        self._meters: dict[K, RateMeter] = {}
        self._created = 0

    def __getitem__(self, key: K) -> RateMeter:
        meter = self._meters.get(key)
        if meter is None:
            self._created += 1
            if self._created % self.FORGET_IDLE_AFTER == 0:
                self._meters = {k: m for k, m in self._meters.items() if not m.idle()}
            meter = self._meters[key] = RateMeter(self._samples, self._sample_s, self._clock)
        return meter

    def items(self) -> list[tuple[K, RateMeter]]:
        return list(self._meters.items())


class ReplicationQuota:
    """One side's quota: the configured rate (read at every check: a dynamic config) and
    the bytes its throttled replicas moved (replication.quota.window.num samples of
    replication.quota.window.size.seconds)."""

    def __init__(
        self,
        limit: Callable[[], int],
        samples: int = 11,
        sample_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._limit = limit
        self._meter = RateMeter(samples, sample_s, clock)

    def exceeded(self) -> bool:
        limit = self._limit()
        return limit < UNTHROTTLED and self._meter.rate() > limit

    def record(self, size: int) -> None:
        if size:
            self._meter.record(size)
