"""The quota manager's arithmetic, on a clock the test moves: Kafka's throttle time
``(rate - quota) / quota * window``, a throttled fetch taken back, the largest response one
window allows, request time bounded by one sample, and the controller mutation bucket."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry, Counter

from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.security.client_quota import CLIENT_ID, entity_of
from odradek.broker.server.client_quota_manager import ClientQuotaManager, QuotaType

APP = entity_of([(CLIENT_ID, "app")])


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def manager(quotas: dict[str, float], clock: Clock, samples: int = 11) -> ClientQuotaManager:
    image = MetadataImage("c", 0, client_quotas={APP: quotas})
    counter = Counter("throttle", "", ["type"], registry=CollectorRegistry())
    return ClientQuotaManager(lambda: image, counter, samples=samples, clock=clock)


def test_nothing_is_measured_for_a_kind_no_entity_sets() -> None:
    quotas = manager({"producer_byte_rate": 1000.0}, Clock())
    assert quotas.active(QuotaType.PRODUCE) and not quotas.active(QuotaType.FETCH)
    assert quotas.record(QuotaType.FETCH, "User:ANONYMOUS", "app", 10**9) == 0
    assert quotas.record(QuotaType.PRODUCE, "User:ANONYMOUS", "other", 10**9) == 0


def test_a_client_over_its_byte_rate_is_throttled_for_kafkas_time() -> None:
    clock = Clock()
    quotas = manager({"producer_byte_rate": 1000.0}, clock)
    # 10 samples' minimum window: 10 s; 10,000 bytes in it is exactly the quota
    assert quotas.record(QuotaType.PRODUCE, "User:ANONYMOUS", "app", 10_000) == 0
    # 15,000 bytes over 10 s: 1,500 B/s, half over the quota: half the window, 5 s
    assert quotas.record(QuotaType.PRODUCE, "User:ANONYMOUS", "app", 5_000) == 5000
    clock.now += 30  # every sample expired
    assert quotas.record(QuotaType.PRODUCE, "User:ANONYMOUS", "app", 1_000) == 0


def test_a_throttled_fetch_is_taken_back_and_one_window_bounds_a_response() -> None:
    quotas = manager({"consumer_byte_rate": 1000.0}, Clock())
    assert quotas.window_bytes(QuotaType.FETCH, "User:ANONYMOUS", "app") == 10_000
    assert quotas.fetch_throttle_ms("User:ANONYMOUS", "app", 10_000) == 0
    assert quotas.fetch_throttle_ms("User:ANONYMOUS", "app", 10_000) == 10_000
    # the second response was not sent: only the first counts
    assert quotas.fetch_throttle_ms("User:ANONYMOUS", "app", 0) == 0


def test_request_time_throttles_are_bounded_by_one_sample() -> None:
    quotas = manager({"request_percentage": 10.0}, Clock())
    assert quotas.record(QuotaType.REQUEST, "User:ANONYMOUS", "app", 10_000.0) == 1000


def test_mutations_over_the_bucket_are_refused_when_strict_and_throttled_otherwise() -> None:
    clock = Clock()
    quotas = manager({"controller_mutation_rate": 2.0}, clock)
    strict = quotas.mutation_quota("User:ANONYMOUS", "app", strict=True)
    strict.record(30)  # the bucket holds 11 s of 2/s and may go negative once
    with pytest.raises(KafkaError) as refused:
        strict.record(1)
    assert refused.value.code is ErrorCode.throttling_quota_exceeded
    assert strict.throttle_ms() == 4000  # 8 partitions owed at 2/s
    lenient = quotas.mutation_quota("User:ANONYMOUS", "app", strict=False)
    lenient.record(1)
    assert lenient.throttle_ms() == 4500
