"""One client connection: read frames, answer them strictly in request order.

Like Kafka, a connection is served one request at a time (the next frame is
read after the previous response is written), which keeps responses in order
and produce requests of one producer in sequence. A frame that cannot be
decoded closes this connection only.

What one connection holds is bounded: the size prefix is checked before any of the
frame is read (``socket.request.max.bytes``), each frame (SASL tokens included) takes its
bytes of the broker's ``queued.max.request.bytes`` before its body is read and a slot of
``queued.max.requests`` once read, both until it is answered, and a response is written
out (the transport's buffer drained) before the next frame is read, so a client that
never reads its responses stops being read. A connection that has waited for its client
(for a frame to arrive, or a response to be taken) longer than
``connections.max.idle.ms`` is expired by the listeners.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import ssl
import struct
import time
from collections.abc import Mapping, Sequence

from prometheus_client import Counter, Histogram

from odradek.broker.log.partition_log import FileRegion
from odradek.broker.protocol.api_keys import ApiKey
from odradek.broker.protocol.entity_builder import build_entity
from odradek.broker.protocol.errors import ErrorCode
from odradek.broker.protocol.framing import (
    MalformedRequest,
    Request,
    RequestHeader,
    decode_request,
    encode_response,
    read_header,
    response_schema,
)
from odradek.broker.security.principal import ANONYMOUS
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.handlers import API_HANDLERS, is_supported
from odradek.broker.server.handlers.api_versions import api_versions_body
from odradek.broker.server.handlers.types import EncodedResponse, Response
from odradek.broker.server.listener_security import ListenerSecurity
from odradek.broker.server.request_throttling import throttled
from odradek.broker.server.sasl_authenticator import SaslAuthenticator

log = logging.getLogger(__name__)

_SIZE = struct.Struct(">i")
_CONNECTION_IDS = itertools.count(1)
_HEADER = struct.Struct(">ii")  # size, correlation id
SENDFILE_THRESHOLD = 64 * 1024
# Over TLS a region is read and encrypted a block at a time: less memory than the whole
# region, and a third of the CPU per GB (bench/: consume over SSL, 1 MiB against whole)
TLS_WRITE_BLOCK = 1024 * 1024


class ClosedAfterResponse(Exception):
    """A response that ends the connection (a failed authentication) has been written."""


class Connection:
    def __init__(
        self,
        context: BrokerContext,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        security: ListenerSecurity,
    ) -> None:
        self._context = context
        self._reader = reader
        self._writer = writer
        self._max_request_size = context.config.get_int("socket.request.max.bytes")
        self._peer = writer.get_extra_info("peername")
        self._client_host = f"/{self._peer[0]}" if self._peer else ""
        self._api_metrics: dict[int, tuple[Counter, Histogram]] = {}
        self.id = next(_CONNECTION_IDS)
        self.listener = security.listener.name
        # TLS cannot sendfile: asyncio's fallback would seek and read the segment's shared
        # file object in a worker thread, racing every other reader of that segment.
        self._tls = security.tls is not None
        self._principal = str(ANONYMOUS)
        # when the last request began (the least recently active is closed first)
        self.last_active = time.monotonic()
        # since when it waits for the client (a frame, or a response taken); None: handling
        self._waiting_since: float | None = self.last_active
        self._expired = False
        if security.principal_mapper is not None:
            certificate = writer.get_extra_info("peercert")
            subject = certificate.get("subject") if certificate else None
            self._principal = str(security.principal_mapper.principal(subject))
        self._sasl = (
            SaslAuthenticator(
                security.sasl,
                self.listener,
                security.max_reauth_ms,
                security.max_sasl_token_bytes,
                context.metrics.authentications,
                self._peer,
            )
            if security.sasl is not None
            else None
        )

    async def serve(self) -> None:
        metrics = self._context.metrics
        metrics.connections.inc()
        requests = self._context.requests
        try:
            while True:
                raw_token = self._sasl is not None and self._sasl.expects_raw_token
                frame = await self._read_frame(raw_token)
                self.last_active = time.monotonic()
                self._waiting_since = None
                started = time.perf_counter()
                await requests.enter(self.id)
                if raw_token:
                    await self._serve_raw_token(frame)
                else:
                    await self._serve_frame(frame, started)
        except (asyncio.IncompleteReadError, ConnectionError, ClosedAfterResponse):
            pass
        except MalformedRequest as error:
            metrics.malformed_frames.inc()
            log.warning("closing connection from %s: %s", self._peer, error)
        except ssl.SSLError as error:  # a record that does not decrypt, an alert, ...
            log.warning("closing TLS connection from %s: %s", self._peer, error.reason or error)
        except Exception:
            if not self._expired:  # else aborted in the middle of a sendfile
                log.exception("closing connection from %s after an unexpected error", self._peer)
        finally:
            requests.leave(self.id)  # what a frame cut short or a failed request held
            metrics.connections.dec()
            self._context.shares.connection_closed(self.id)
            self._writer.close()

    async def _read_frame(self, raw_token: bool) -> bytes:
        """The next frame, its body read once queued.max.request.bytes has room for it."""
        self._waiting_since = time.monotonic()
        (size,) = _SIZE.unpack(await self._reader.readexactly(4))
        self._check_size(size, raw_token)
        self._waiting_since = None  # waiting for the broker, not for the client
        await self._context.requests.reserve(self.id, size)
        self._waiting_since = time.monotonic()
        return await self._reader.readexactly(size)

    def _check_size(self, size: int, raw_token: bool) -> None:
        if raw_token:
            assert self._sasl is not None
            if not 0 <= size <= self._sasl.max_token_bytes:
                raise MalformedRequest(f"SASL token of {size} bytes (sasl.server.max.receive.size)")
        # 10: a header with an empty client id and an empty body, as Java's SASL
        # authenticator sends ApiVersions v0 for an admin client without client.id
        elif not 10 <= size <= self._max_request_size:
            raise MalformedRequest(
                f"frame size {size} outside 10..{self._max_request_size} (socket.request.max.bytes)"
            )

    def waiting_for_client(self, now: float) -> float:
        """How long it has waited for its client: for a frame to arrive, or for a response
        to be taken (0 while a request is handled)."""
        return 0.0 if self._waiting_since is None else now - self._waiting_since

    def expire(self, idle_s: float) -> None:
        """Close it for ``connections.max.idle.ms``, dropping what the client has not read
        (a plain close would keep the socket until it does)."""
        if self._expired:
            return
        self._expired = True
        self._context.metrics.connections_idle_closed.inc()
        log.info(
            "closing connection from %s: waited %.0f s for its client (connections.max.idle.ms)",
            self._peer,
            idle_s,
        )
        self._writer.transport.abort()

    async def _serve_frame(self, frame: bytes, started: float) -> None:
        header = read_header(frame)
        if not is_supported(header.api_key, header.api_version):
            if header.api_key != ApiKey.API_VERSIONS:
                raise MalformedRequest(
                    f"unsupported API {header.api_key} version {header.api_version}"
                )
            # Kafka answers an unknown ApiVersions version in the v0 body, so the
            # client can pick a version both sides know.
            body = build_entity(
                response_schema(ApiKey.API_VERSIONS, 0),
                api_versions_body(ErrorCode.unsupported_version),
            )
            answer = encode_response(ApiKey.API_VERSIONS, 0, header.correlation_id, body)
            self._context.requests.leave(self.id)
            await self._write(answer)
            return
        await self._answer(frame, header, started)

    async def _answer(self, frame: bytes, header: RequestHeader, started: float) -> None:
        sasl = self._sasl
        if sasl is not None and not sasl.serves(header.api_key):
            raise MalformedRequest(
                f"{ApiKey(header.api_key).name} request on SASL listener {self.listener}"
                " before authentication (or after the session expired)"
            )
        principal = sasl.principal if sasl is not None and sasl.principal else self._principal
        request = decode_request(frame, self._client_host, self.listener, principal, self.id)
        closes = False
        mute_ms = 0  # client quotas: how long not to read this connection after answering
        response: Response
        if sasl is not None and header.api_key == ApiKey.SASL_HANDSHAKE:
            response, closes = sasl.handshake(request.body.mechanism, header.api_version)
        elif sasl is not None and header.api_key == ApiKey.SASL_AUTHENTICATE:
            response, closes = await sasl.authenticate(request.body.auth_bytes)
        else:
            handling = API_HANDLERS[header.api_key].handle(self._context, request)
            response, mute_ms = await throttled(self._context.quotas, request, handling, started)
        self._context.requests.leave(self.id)  # answered: its writing is bounded apart
        self._waiting_since = time.monotonic()
        if isinstance(response, EncodedResponse):
            if response.chunks:
                await self._write_chunks(request, response.chunks)
        elif isinstance(response, Mapping):
            schema = response_schema(header.api_key, header.api_version)
            answer = encode_response(
                header.api_key,
                header.api_version,
                header.correlation_id,
                build_entity(schema, response),
            )
            await self._write(answer)
        requests, latency = self._request_metrics(header.api_key)
        requests.inc()
        latency.observe(time.perf_counter() - started)
        if closes:
            raise ClosedAfterResponse()
        if mute_ms:  # Kafka mutes the channel: the client's next request waits unread
            await asyncio.sleep(mute_ms / 1000)

    async def _serve_raw_token(self, token: bytes) -> None:
        """A SASL token framed only by its size, as clients send them after SaslHandshake
        v0; a failure closes the connection without an answer, as in Kafka."""
        assert self._sasl is not None
        response, closes = await self._sasl.authenticate(token)
        self._context.requests.leave(self.id)
        if closes:
            raise ClosedAfterResponse()
        answer = response["auth_bytes"]
        await self._write(_SIZE.pack(len(answer)) + answer)

    def _request_metrics(self, api_key: int) -> tuple[Counter, Histogram]:
        """The metrics labelled with ``api_key``'s name, looked up once per connection."""
        found = self._api_metrics.get(api_key)
        if found is None:
            api = ApiKey(api_key).name.lower()
            metrics = self._context.metrics
            found = (metrics.requests.labels(api), metrics.request_latency.labels(api))
            self._api_metrics[api_key] = found
        return found

    async def _write(self, frame: bytes) -> None:
        self._writer.write(frame)
        await self._writer.drain()

    async def _write_chunks(self, request: Request, chunks: Sequence[bytes | FileRegion]) -> None:
        header = request.header
        flexible = response_schema(header.api_key, header.api_version).__header_schema__
        tag_byte = b"\0" if flexible.__flexible__ else b""
        size = (
            4
            + len(tag_byte)
            + sum(len(chunk) if isinstance(chunk, bytes) else chunk.length for chunk in chunks)
        )
        self._writer.write(_HEADER.pack(size, header.correlation_id) + tag_byte)
        for chunk in chunks:
            if self._writer.transport.is_closing():  # the client left: read no more for it
                raise ConnectionResetError("client closed the connection")
            if isinstance(chunk, bytes):
                self._writer.write(chunk)
            elif chunk.length < SENDFILE_THRESHOLD:
                self._writer.write(self._read_region(chunk))
            elif self._tls:  # no sendfile: positional reads (pread) of blocks, each flushed
                for block in chunk.blocks(TLS_WRITE_BLOCK):
                    self._writer.write(self._read_region(block))
                    await self._writer.drain()
            else:
                await self._writer.drain()
                sent = await asyncio.get_running_loop().sendfile(
                    self._writer.transport, chunk.file, chunk.position, chunk.length
                )
                if sent != chunk.length:
                    raise ConnectionError("segment shrank while being sent")
        await self._writer.drain()

    @staticmethod
    def _read_region(region: FileRegion) -> bytes:
        try:
            return region.read()
        except OSError as error:
            raise ConnectionError("segment shrank while being sent") from error
