"""The Kafka protocol's listening sockets: one server per listener, TLS where the listener
says so, with certificates reloaded from their files as they change; every connection
served under its listener's security, unless its address is over its ip quota."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import Sequence

from odradek.broker.server.connection import Connection
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.listener_security import ListenerSecurity

log = logging.getLogger(__name__)


class KafkaListeners:
    def __init__(
        self, context: BrokerContext, listeners: Sequence[ListenerSecurity], reload_every_s: float
    ) -> None:
        self._context = context
        self._listeners = listeners
        self._reload_every_s = reload_every_s
        self._servers: list[asyncio.Server] = []
        self._connections: set[asyncio.Task[None]] = set()
        self._reloader: asyncio.Task[None] | None = None

    async def start(self) -> None:
        for security in self._listeners:
            listener = security.listener
            server = await asyncio.start_server(
                functools.partial(self._serve, security=security),
                listener.bind_host,
                listener.port,
                ssl=security.tls.context if security.tls is not None else None,
                reuse_address=True,
            )
            self._servers.append(server)
        if any(security.tls is not None for security in self._listeners):
            self._reloader = asyncio.create_task(self._reload_certificates(), name="tls reload")

    async def close(self) -> None:
        """Stop accepting, then end every connection."""
        for server in self._servers:
            server.close()
        if self._reloader is not None:
            self._reloader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reloader
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
        self._connections.add(task)
        try:
            peer = writer.get_extra_info("peername")
            hold_s = self._context.connection_quota.throttle_s(peer[0]) if peer else 0.0
            if hold_s:
                log.debug("connection from %s over its ip quota: closed in %.3fs", peer[0], hold_s)
                await asyncio.sleep(hold_s)
                writer.close()
                return
            await Connection(self._context, reader, writer, security).serve()
        except asyncio.CancelledError:
            pass  # shutting down; asyncio would log a cancelled connection task as an error
        finally:
            self._connections.discard(task)

    async def _reload_certificates(self) -> None:
        while True:
            await asyncio.sleep(self._reload_every_s)
            for security in self._listeners:
                if security.tls is not None:
                    await asyncio.to_thread(security.tls.reload)
