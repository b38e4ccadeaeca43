"""Kafka's limits on connections (its ``ConnectionQuotas``: KIP-308, KIP-402, KIP-612),
checked as each connection is accepted, from the broker's effective (dynamic) config:

- ``listener.name.<l>.max.connections``: a new connection to a full listener waits for
  one to close (Kafka's acceptor stops accepting); ``max.connections`` does the same over
  all listeners but the inter-broker one, which it never keeps waiting.
- ``max.connection.creation.rate`` (all listeners but the inter-broker one) and
  ``listener.name.<l>.max.connection.creation.rate``: a connection that takes the rate
  over waits out the throttle time, and the listener accepts nothing meanwhile.
- an ``ip`` entity's ``connection_creation_rate`` (``IpConnectionQuota``): the connection
  is held for the throttle time, then closed.
- ``max.connections.per.ip`` and its overrides: a connection over its address's limit is
  closed at once.

``excess()`` says how many connections of the other listeners must close when the
inter-broker listener (or a lowered ``max.connections``) takes the broker over the limit.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass

from prometheus_client import Counter

from odradek.broker.cluster.replication_quota import RateMeters
from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.config.definitions import INT_MAX, parse_per_ip_overrides
from odradek.broker.config.listeners import Listener
from odradek.broker.server.connection_quota import IpConnectionQuota, throttle_s

_BROKER_WIDE = ""  # the rate meter of all listeners but the inter-broker one
_RECHECK_S = 1.0  # a waiting connection also looks again this often (a raised limit)


@dataclass(frozen=True)
class Refusal:
    """Why a connection is closed unserved (the limit's name, and in words), and how long
    it is held first."""

    limit: str
    reason: str
    hold_s: float = 0.0


class ConnectionLimits:
    def __init__(
        self,
        config: Callable[[], BrokerConfig],
        inter_broker_listener: str,
        ip_quota: IpConnectionQuota,
        accept_throttle_time: Counter,
        samples: int,
        sample_s: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._config = config
        self._inter_broker = inter_broker_listener
        self._ip_quota = ip_quota
        self._accept_throttle_time = accept_throttle_time
        self._rates: RateMeters[str] = RateMeters(samples, sample_s, clock)
        self._per_ip: collections.Counter[str] = collections.Counter()
        self._per_listener: collections.Counter[str] = collections.Counter()
        self._waiting: collections.Counter[str] = collections.Counter()
        self._accepting: dict[str, asyncio.Lock] = collections.defaultdict(asyncio.Lock)
        self._freed = asyncio.Event()
        self._overrides: tuple[str, dict[str, int]] = ("", {})

    async def admit(self, listener: Listener, ip: str) -> Refusal | None:
        """Wait until ``listener`` may take a connection from ``ip``, and count it; a
        Refusal says to close it instead. An admitted connection is ``release``d later.

        At most ``socket.listen.backlog.size`` connections wait per listener, as Kafka's
        acceptor leaves no more in the kernel's backlog; more are closed at once."""
        waiting = self._waiting[listener.name]
        if waiting >= self._config().get_int("socket.listen.backlog.size"):
            return Refusal("max.connections", f"{waiting} connections already wait for a slot")
        self._waiting[listener.name] += 1
        try:
            async with self._accepting[listener.name]:
                await self._throttle_accepts(listener)
                limit = await self._max_for_ip(ip)
                await self._wait_for_slot(listener)
                # no await from here on: the slot found is the slot taken
                hold_s = self._ip_quota.throttle_s(ip)
                if hold_s:
                    reason = "over its address's connection rate"
                    return Refusal("connection_creation_rate", reason, hold_s)
                if self._per_ip[ip] >= limit:
                    reason = f"its address has the configured maximum of {limit} connections"
                    return Refusal("max.connections.per.ip", reason)
                self._per_ip[ip] += 1
                self._per_listener[listener.name] += 1
        finally:
            self._waiting[listener.name] -= 1
        return None

    def release(self, listener: Listener, ip: str) -> None:
        self._per_ip[ip] -= 1
        if not self._per_ip[ip]:
            del self._per_ip[ip]
        self._per_listener[listener.name] -= 1
        self._freed.set()

    def excess(self) -> int:
        """How many connections of the listeners ``max.connections`` bounds are over it."""
        limit = self._config().get_int("max.connections")
        over = self._total() - limit
        others = self._total() - self._per_listener[self._inter_broker]
        return max(0, min(over, others))

    def _total(self) -> int:
        return sum(self._per_listener.values())

    async def _wait_for_slot(self, listener: Listener) -> None:
        while not self._slot_available(listener):
            self._freed.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_RECHECK_S):
                    await self._freed.wait()

    def _slot_available(self, listener: Listener) -> bool:
        config = self._config()
        if self._per_listener[listener.name] >= _own_limit(config, listener, "max.connections"):
            return False
        return listener.name == self._inter_broker or self._total() < config.get_int(
            "max.connections"
        )

    async def _throttle_accepts(self, listener: Listener) -> None:
        config = self._config()
        quotas = [(listener.name, _own_limit(config, listener, "max.connection.creation.rate"))]
        if listener.name != self._inter_broker:
            quotas.append((_BROKER_WIDE, config.get_int("max.connection.creation.rate")))
        wait_s = 0.0
        for key, quota in quotas:
            if quota < INT_MAX:
                meter = self._rates[key]
                meter.record(1)
                wait_s = max(wait_s, throttle_s(*meter.measure(), quota))
        if wait_s:
            self._accept_throttle_time.inc(wait_s)
            await asyncio.sleep(wait_s)

    async def _max_for_ip(self, ip: str) -> int:
        config = self._config()
        text = config.get_str("max.connections.per.ip.overrides") or ""
        if text != self._overrides[0]:
            self._overrides = (text, await _resolved_overrides(text))
        return self._overrides[1].get(ip, config.get_int("max.connections.per.ip"))


def _own_limit(config: BrokerConfig, listener: Listener, name: str) -> int:
    """``listener.name.<l>.<name>``; unset: no limit."""
    value = config.listener_own_value(listener, name)
    return value if isinstance(value, int) else INT_MAX


async def _resolved_overrides(text: str) -> dict[str, int]:
    """The overrides by address: a host name's limit applies to each address it resolves
    to (an unknown name limits nothing)."""
    loop = asyncio.get_running_loop()
    resolved: dict[str, int] = {}
    for host, limit in parse_per_ip_overrides(text).items():
        try:
            infos = await loop.getaddrinfo(host, None, type=socket.SOCK_STREAM)
        except OSError:
            continue
        for info in infos:
            resolved.setdefault(str(info[4][0]), limit)
    return resolved
