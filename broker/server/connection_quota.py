"""Kafka's per-ip connection creation rate quota (KIP-612, ``ConnectionQuotas``).

An ``ip`` entity's ``connection_creation_rate`` (the ip's own, else the ``<default>`` ip's)
bounds how many connections per second a client address may open, measured over
``quota.window.num`` samples of ``quota.window.size.seconds``. A connection over it is not
counted and is closed after the throttle time (``throttle_s``): the
client sees it closed, and reconnects after its backoff, as with Kafka.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from prometheus_client import Counter

from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.cluster.replication_quota import RateMeters
from odradek.broker.security.client_quota import CONNECTION_CREATION_RATE, IP


class IpConnectionQuota:
    def __init__(
        self,
        image: Callable[[], MetadataImage],
        throttle_time: Counter,
        samples: int,
        sample_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._image = image
        self._throttle_time = throttle_time
        self._meters: RateMeters[str] = RateMeters(samples, sample_s, clock)

    def throttle_s(self, ip: str) -> float:
        """Count a new connection from ``ip``; 0 admits it, else how long to hold it before
        closing it (and then it is not counted)."""
        quota = self._quota(ip)
        if quota is None:
            return 0.0
        meter = self._meters[ip]
        meter.record(1)
        hold_s = throttle_s(*meter.measure(), quota)
        if hold_s:
            meter.record(-1)
            self._throttle_time.inc(hold_s)
        return hold_s

    def _quota(self, ip: str) -> float | None:
        quotas = self._image().client_quotas
        for entity in (((IP, ip),), ((IP, None),)):
            values = quotas.get(entity)
            if values is not None and CONNECTION_CREATION_RATE in values:
                return values[CONNECTION_CREATION_RATE]
        return None


def throttle_s(total: float, window_s: float, quota: float) -> float:
    """Kafka's throttle time for a rate of ``total / window_s`` against ``quota``:
    ``(rate - quota) / quota * window``, at most the window; 0 within the quota."""
    rate = total / window_s
    if rate <= quota:
        return 0.0
    return window_s if quota <= 0 else min(window_s, (rate - quota) / quota * window_s)
