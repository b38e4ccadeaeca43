"""One connection to each other broker for requests a broker makes on its own account
(a pool for WriteTxnMarkers, another for AddPartitionsToTxn's verification), on the
inter-broker listener: a connection carries one request at a time, and one that fails is
dropped and opened anew by the next request."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from odradek.broker.cluster.metadata_store import MetadataStore
from odradek.broker.cluster.peer_connection import PeerConnection
from odradek.broker.cluster.peer_security import PeerSecurity
from odradek.broker.protocol.errors import ErrorCode, KafkaError


class PeerPool:
    def __init__(self, store: MetadataStore, timeout_s: float, security: PeerSecurity) -> None:
        self._store = store
        self._timeout_s = timeout_s
        self._security = security
        self._peers: dict[int, tuple[PeerConnection, asyncio.Lock]] = {}

    async def request(
        self, broker: int, api_key: int, version: int, body: Mapping[str, Any]
    ) -> Any:
        """The decoded answer of ``broker``; OSError, TimeoutError or IncompleteReadError
        when the connection fails, KafkaError when the broker is not registered."""
        connection, lock = self._peer(broker)
        async with lock:
            try:
                return await connection.request(api_key, version, body)
            except Exception:
                connection.close()
                if self._peers.get(broker, (None,))[0] is connection:
                    del self._peers[broker]
                raise

    def close(self) -> None:
        for connection, _ in self._peers.values():
            connection.close()
        self._peers.clear()

    def _peer(self, broker: int) -> tuple[PeerConnection, asyncio.Lock]:
        registration = self._store.image.brokers.get(broker)
        if registration is None:
            raise KafkaError(ErrorCode.not_leader_or_follower, f"broker {broker} is not alive")
        peer = self._peers.get(broker)
        if peer is None or (peer[0].host, peer[0].port) != (registration.host, registration.port):
            if peer is not None:
                peer[0].close()
            peer = self._peers[broker] = (
                PeerConnection(
                    registration.host, registration.port, self._timeout_s, self._security
                ),
                asyncio.Lock(),
            )
        return peer
