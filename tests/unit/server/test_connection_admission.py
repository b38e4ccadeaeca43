"""Kafka's connection limits as the acceptor applies them: per address (with overrides by
address and host name), per listener and broker-wide (the inter-broker listener never kept
waiting, and counted toward the excess), and the creation rates."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter

from odradek.broker.cluster.metadata_image import MetadataImage
from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.config.listeners import Listener, SecurityProtocol
from odradek.broker.server.connection_limits import ConnectionLimits
from odradek.broker.server.connection_quota import IpConnectionQuota

EXTERNAL = Listener("EXTERNAL", SecurityProtocol.PLAINTEXT, "127.0.0.1", 9092)
INTERNAL = Listener("INTERNAL", SecurityProtocol.PLAINTEXT, "127.0.0.1", 9093)
OTHER = Listener("OTHER", SecurityProtocol.PLAINTEXT, "127.0.0.1", 9094)
LISTENERS = {
    "listeners": "EXTERNAL://127.0.0.1:9092,INTERNAL://127.0.0.1:9093,OTHER://127.0.0.1:9094",
    "listener.security.protocol.map": "EXTERNAL:PLAINTEXT,INTERNAL:PLAINTEXT,OTHER:PLAINTEXT",
    "inter.broker.listener.name": "INTERNAL",
}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def limits(settings: Mapping[str, str], accept_throttle: Counter | None = None) -> ConnectionLimits:
    config = BrokerConfig.load(environ={}, overrides={**LISTENERS, **settings})
    clock = Clock()
    registry = CollectorRegistry()
    ips = IpConnectionQuota(
        lambda: MetadataImage("c", 0), Counter("ip", "", registry=registry), 11, 1.0, clock
    )
    accept_throttle = accept_throttle or Counter("accept", "", registry=registry)
    return ConnectionLimits(lambda: config, "INTERNAL", ips, accept_throttle, 11, 1.0, clock)


def on_a_loop(test: Callable[[], Coroutine[Any, Any, None]]) -> Callable[[], None]:
    @functools.wraps(test)
    def run() -> None:
        asyncio.run(test())

    return run


async def waits(admission: asyncio.Task[object]) -> bool:
    await asyncio.sleep(0.05)
    return not admission.done()


@on_a_loop
async def test_an_address_over_its_limit_is_refused_until_one_of_its_connections_closes() -> None:
    checked = limits(
        {
            "max.connections.per.ip": "2",
            "max.connections.per.ip.overrides": "127.0.0.5:0,localhost:4",
        }
    )
    assert await checked.admit(EXTERNAL, "10.0.0.1") is None
    assert await checked.admit(INTERNAL, "10.0.0.1") is None  # every listener counts
    refusal = await checked.admit(EXTERNAL, "10.0.0.1")
    assert refusal is not None and refusal.limit == "max.connections.per.ip"
    assert refusal.reason == "its address has the configured maximum of 2 connections"
    assert refusal.hold_s == 0
    assert await checked.admit(EXTERNAL, "10.0.0.2") is None  # each address on its own
    checked.release(EXTERNAL, "10.0.0.1")
    assert await checked.admit(EXTERNAL, "10.0.0.1") is None

    assert await checked.admit(EXTERNAL, "127.0.0.5") is not None  # override 0: none
    # localhost's override applies to the address it resolves to
    assert [await checked.admit(EXTERNAL, "127.0.0.1") for _ in range(4)] == [None] * 4
    assert await checked.admit(EXTERNAL, "127.0.0.1") is not None


@on_a_loop
async def test_max_connections_keeps_new_ones_waiting_but_never_the_inter_broker_listener() -> None:
    checked = limits({"max.connections": "2"})
    assert await checked.admit(EXTERNAL, "10.0.0.1") is None
    assert await checked.admit(EXTERNAL, "10.0.0.2") is None
    third = asyncio.create_task(checked.admit(EXTERNAL, "10.0.0.3"))
    assert await waits(third)
    assert checked.excess() == 0

    assert await checked.admit(INTERNAL, "10.0.0.4") is None  # over the limit: not waiting
    assert checked.excess() == 1  # one of the other listeners' connections is to close
    checked.release(EXTERNAL, "10.0.0.1")  # closed: back at the limit, still full
    assert checked.excess() == 0
    assert await waits(third)
    checked.release(INTERNAL, "10.0.0.4")
    assert await asyncio.wait_for(third, 1) is None


@on_a_loop
async def test_a_listeners_own_limit_bounds_it_alone_even_the_inter_broker_one() -> None:
    checked = limits({"listener.name.internal.max.connections": "1"})
    assert await checked.admit(INTERNAL, "10.0.0.1") is None
    second = asyncio.create_task(checked.admit(INTERNAL, "10.0.0.2"))
    assert await waits(second)
    assert await checked.admit(EXTERNAL, "10.0.0.3") is None
    checked.release(INTERNAL, "10.0.0.1")
    assert await asyncio.wait_for(second, 1) is None


@on_a_loop
async def test_connections_over_the_creation_rate_wait_kafkas_throttle_time() -> None:
    # 20/s over a window of at least 10 s: 200 at once, the 201st is 0.5% over: 0.05 s
    throttled = Counter("accept", "", registry=CollectorRegistry())
    checked = limits({"max.connection.creation.rate": "20"}, throttled)
    for number in range(200):
        assert await checked.admit(EXTERNAL, f"10.0.{number // 100}.{number % 100}") is None
    assert throttled._value.get() == 0
    loop = asyncio.get_running_loop()
    started = loop.time()
    assert await checked.admit(EXTERNAL, "10.0.9.9") is None
    assert loop.time() - started >= 0.05
    assert round(throttled._value.get(), 6) == 0.05
    # the broker-wide rate leaves the inter-broker listener alone; its own rate does not
    for _ in range(300):
        assert await checked.admit(INTERNAL, "10.0.8.8") is None
    assert round(throttled._value.get(), 6) == 0.05

    own = limits({"listener.name.internal.max.connection.creation.rate": "20"}, throttled)
    for _ in range(201):
        assert await own.admit(INTERNAL, "10.0.8.8") is None
    assert round(throttled._value.get(), 6) == 0.1


@on_a_loop
async def test_a_connection_throttled_on_one_listener_does_not_overtake_another_for_a_slot() -> (
    None
):
    # 20/s on EXTERNAL over a window of at least 10 s: the 201st connection waits 0.05 s
    checked = limits(
        {"max.connections": "201", "listener.name.external.max.connection.creation.rate": "20"}
    )
    for number in range(200):
        assert await checked.admit(EXTERNAL, f"10.0.{number // 100}.{number % 100}") is None
    throttled = asyncio.create_task(checked.admit(EXTERNAL, "10.0.9.9"))
    await asyncio.sleep(0)  # it is asleep in its throttle time
    assert await checked.admit(OTHER, "10.0.8.8") is None  # takes the last slot meanwhile
    assert await waits(throttled)  # so the throttled one waits for a slot
    assert checked.excess() == 0
    checked.release(OTHER, "10.0.8.8")
    assert await asyncio.wait_for(throttled, 1) is None


@on_a_loop
async def test_no_more_than_the_backlog_waits_for_a_slot() -> None:
    checked = limits({"max.connections": "1", "socket.listen.backlog.size": "1"})
    assert await checked.admit(EXTERNAL, "10.0.0.1") is None
    second = asyncio.create_task(checked.admit(EXTERNAL, "10.0.0.2"))
    assert await waits(second)
    refusal = await checked.admit(EXTERNAL, "10.0.0.3")
    assert refusal is not None and refusal.reason == "1 connections already wait for a slot"
    checked.release(EXTERNAL, "10.0.0.1")
    assert await asyncio.wait_for(second, 1) is None
