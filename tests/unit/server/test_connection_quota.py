"""The per-ip connection creation rate quota's arithmetic, on a clock the test moves: the
ip's own quota before the default ip's, Kafka's throttle time, and a refused connection
not counted."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter

from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.security.client_quota import IP, entity_of
from odradek.broker.server.connection_quota import IpConnectionQuota

RATE = "connection_creation_rate"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def quota(clock: Clock) -> tuple[IpConnectionQuota, Counter]:
    image = MetadataImage(
        "c",
        0,
        client_quotas={
            entity_of([(IP, None)]): {RATE: 2.0},
            entity_of([(IP, "10.0.0.7")]): {RATE: 10.0},
            entity_of([(IP, "10.0.0.8")]): {"something_else": 1.0},
        },
    )
    throttled = Counter("throttle", "", registry=CollectorRegistry())
    return IpConnectionQuota(
        lambda: image, throttled, samples=11, sample_s=1.0, clock=clock
    ), throttled


def test_an_address_over_its_rate_is_held_for_kafkas_time_and_not_counted() -> None:
    clock = Clock()
    ips, throttled = quota(clock)
    # the default ip quota, 2/s over a window of at least 10 s: 20 connections at once
    assert [ips.throttle_s("10.0.0.1") for _ in range(20)] == [0.0] * 20
    # a 21st: 2.1/s, 5% over: 5% of the 10 s window
    assert round(ips.throttle_s("10.0.0.1"), 6) == 0.5
    assert round(ips.throttle_s("10.0.0.1"), 6) == 0.5  # the refused one did not count
    assert round(throttled._value.get(), 6) == 1.0
    assert ips.throttle_s("10.0.0.2") == 0.0  # each address on its own
    clock.now += 30  # every sample expired
    assert ips.throttle_s("10.0.0.1") == 0.0


def test_an_addresss_own_quota_wins_over_the_default() -> None:
    ips, _ = quota(Clock())
    assert all(ips.throttle_s("10.0.0.7") == 0.0 for _ in range(100))
    assert ips.throttle_s("10.0.0.7") > 0
    # an entity without the key leaves the address to the default
    assert all(ips.throttle_s("10.0.0.8") == 0.0 for _ in range(20))
    assert ips.throttle_s("10.0.0.8") > 0
