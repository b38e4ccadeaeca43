"""A small Kafka protocol client for broker-to-broker requests (replica fetches).

Requests are built from plain data with the protocol layer's entity builder and
encoded and decoded with kio, one request at a time per connection.
"""

from __future__ import annotations

import asyncio
import io
import struct
from collections.abc import Mapping
from typing import Any

from kio.index import load_request_schema, load_response_schema
from kio.serial import entity_reader, entity_writer

from odradek.broker.protocol.entity_builder import build_entity

_HEADER = struct.Struct(">hhi")
_SIZE = struct.Struct(">i")
_INT16 = struct.Struct(">h")
_CLIENT_ID = b"odradek-replica"


class PeerConnection:
    """One connection to another broker; ``request`` is not reentrant."""

    def __init__(self, host: str, port: int, timeout: float = 30.0) -> None:
        self.host = host
        self.port = port
        self._timeout = timeout
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._correlation_id = 0

    async def request(self, api_key: int, version: int, body: Mapping[str, Any]) -> Any:
        """Send one request and return the decoded response body (kio entity)."""
        if self._reader is None or self._writer is None:
            self._reader, self._writer = await asyncio.wait_for(
                asyncio.open_connection(self.host, self.port), self._timeout
            )
        reader, writer = self._reader, self._writer
        assert reader is not None and writer is not None
        schema = load_request_schema(api_key, version)
        self._correlation_id += 1
        frame = io.BytesIO()
        frame.write(b"\0\0\0\0")
        frame.write(_HEADER.pack(api_key, version, self._correlation_id))
        frame.write(_INT16.pack(len(_CLIENT_ID)) + _CLIENT_ID)
        if schema.__header_schema__.__flexible__:
            frame.write(b"\0")
        entity_writer(schema)(frame, build_entity(schema, body))
        data = frame.getbuffer()
        _SIZE.pack_into(data, 0, len(data) - 4)
        writer.write(bytes(data))
        await writer.drain()
        async with asyncio.timeout(self._timeout):
            (size,) = _SIZE.unpack(await reader.readexactly(4))
            payload = await reader.readexactly(size)
        response_schema = load_response_schema(api_key, version)
        offset = 4 + (1 if response_schema.__header_schema__.__flexible__ else 0)
        response, _ = entity_reader(response_schema)(payload, offset)
        return response

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None
