"""The Kafka protocol's listening sockets: one server per listener, TLS where the listener
says so, with certificates reloaded from their files as they change; every connection
served under its listener's security once the connection limits admit it, and closed
once it has waited for its client longer than ``connections.max.idle.ms`` (checked once
a second, as Kafka's selector checks its least recently active connection each poll)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import ssl
import time
from collections.abc import Sequence

from odradek.broker.security.tls_handshakes import report_handshakes
from odradek.broker.server.connection import Connection
from odradek.broker.server.connection_limits import ConnectionLimits
from odradek.broker.server.connection_quota import IpConnectionQuota
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.listener_security import ListenerSecurity

log = logging.getLogger(__name__)

_LIMITS_CHECK_S = 1.0  # how often a lowered max.connections and idle connections are looked for


class KafkaListeners:
    def __init__(
        self, context: BrokerContext, listeners: Sequence[ListenerSecurity], reload_every_s: float
    ) -> None:
        self._context = context
        self._listeners = listeners
        self._reload_every_s = reload_every_s
        self._servers: list[asyncio.Server] = []
        # every connection's task; its Connection once the limits have admitted it
        self._connections: dict[asyncio.Task[None], Connection | None] = {}
        self._background: list[asyncio.Task[None]] = []
        config = context.static_config
        idle_ms = config.get_int("connections.max.idle.ms")
        self._idle_s = idle_ms / 1000 if idle_ms >= 0 else None
        throttle_time = context.metrics.throttle_time
        samples = config.get_int("quota.window.num")
        sample_s = config.get_int("quota.window.size.seconds")
        self._limits = ConnectionLimits(
            lambda: context.config,
            config.inter_broker_listener.name,
            IpConnectionQuota(
                lambda: context.store.image,
                throttle_time.labels("connection_creation"),
                samples,
                sample_s,
            ),
            throttle_time.labels("connection_accept"),
            samples,
            sample_s,
        )

    async def start(self) -> None:
        for security in self._listeners:
            listener = security.listener
            server = await asyncio.start_server(
                functools.partial(self._serve, security=security),
                listener.bind_host,
                listener.port,
                ssl=security.tls.context if security.tls is not None else None,
                reuse_address=True,
                backlog=self._context.static_config.get_int("socket.listen.backlog.size"),
            )
            self._servers.append(server)
            if security.tls is not None:
                report_handshakes(
                    security.tls.context, functools.partial(self._handshake_ended, listener.name)
                )
        self._background.append(asyncio.create_task(self._enforce_limits()))
        if any(security.tls is not None for security in self._listeners):
            self._background.append(
                asyncio.create_task(self._reload_certificates(), name="tls reload")
            )

    def _handshake_ended(self, listener: str, error: ssl.SSLError | None) -> None:
        result = "failure" if error is not None else "success"
        self._context.metrics.authentications.labels(listener, "TLS", result).inc()
        if error is not None:
            log.info("TLS handshake on %s failed: %s", listener, error.reason or error)

    async def close(self) -> None:
        """Stop accepting, then end every connection."""
        for server in self._servers:
            server.close()
        for task in self._background:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        for task in self._connections:
            task.cancel()
        await asyncio.gather(*self._connections, return_exceptions=True)

    async def _serve(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        *,
        security: ListenerSecurity,
    ) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._connections[task] = None
        listener = security.listener
        peer = writer.get_extra_info("peername")
        ip = str(peer[0]) if peer else ""
        try:
            refusal = await self._limits.admit(listener, ip)
            if refusal is not None:
                self._context.metrics.connections_refused.labels(refusal.limit).inc()
                log.debug("closing connection from %s on %s: %s", ip, listener.name, refusal.reason)
                await asyncio.sleep(refusal.hold_s)
                writer.close()
                return
            try:
                connection = self._connections[task] = Connection(
                    self._context, reader, writer, security
                )
                self._close_excess_connections()
                await connection.serve()
            finally:
                self._limits.release(listener, ip)
        except asyncio.CancelledError:
            writer.close()  # shutting down, or closed for max.connections
        finally:
            del self._connections[task]

    def _close_excess_connections(self) -> None:
        """Close the least recently active connections of the listeners ``max.connections``
        bounds while the broker is over it, as Kafka does."""
        excess = self._limits.excess()
        if not excess:
            return
        inter_broker = self._context.static_config.inter_broker_listener.name
        bounded = [
            (connection.last_active, id(task), task)
            for task, connection in self._connections.items()
            if connection is not None and connection.listener != inter_broker
        ]
        excess -= sum(1 for _, _, task in bounded if task.cancelling())
        candidates = sorted(entry for entry in bounded if not entry[2].cancelling())
        for _, _, task in candidates[:excess]:
            self._context.metrics.connections_refused.labels("max.connections").inc()
            log.info("closing the least recently active connection: over max.connections")
            task.cancel()

    def _close_idle_connections(self) -> None:
        if self._idle_s is None:
            return
        now = time.monotonic()
        for connection in self._connections.values():
            if connection is not None and connection.waiting_for_client(now) > self._idle_s:
                connection.expire(self._idle_s)

    async def _enforce_limits(self) -> None:
        while True:
            await asyncio.sleep(_LIMITS_CHECK_S)
            self._close_excess_connections()
            self._close_idle_connections()

    async def _reload_certificates(self) -> None:
        while True:
            await asyncio.sleep(self._reload_every_s)
            for security in self._listeners:
                if security.tls is not None:
                    await asyncio.to_thread(security.tls.reload)
