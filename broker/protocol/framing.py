"""Request frames: the header read by hand, the body decoded by kio.

A frame is an int32 size followed by that many bytes. The header is parsed
here (so unknown tagged fields in it are skipped and an unsupported version
still yields a correlation id to answer); the body goes to kio's native reader once
``body_decoding`` has walked it.
"""

from __future__ import annotations

import functools
import io
import struct
from dataclasses import dataclass
from typing import Any

from kio.index import load_request_schema, load_response_schema
from kio.serial import entity_writer

from odradek.broker.protocol.body_decoding import MalformedBody, decode_body
from odradek.broker.protocol.varint import read_uvarint

# kio resolves a schema by importing it by name (~30 us); every request needs one or two.
request_schema = functools.cache(load_request_schema)
response_schema = functools.cache(load_response_schema)

_HEAD = struct.Struct(">hhi")
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
SIZE = _INT32


class MalformedRequest(Exception):
    """The frame cannot be decoded; the connection that sent it is closed."""


@dataclass(frozen=True, slots=True)
class RequestHeader:
    api_key: int
    api_version: int
    correlation_id: int
    client_id: str | None
    body_offset: int


@dataclass(frozen=True, slots=True)
class Request:
    header: RequestHeader
    body: Any  # the kio request entity of header.api_version
    size: int
    client_host: str = ""  # "/<peer address>" as Kafka shows it (DescribeGroups)
    listener_name: str = ""  # the listener it arrived on: Metadata answers with its endpoints
    principal: str = "User:ANONYMOUS"  # who sent it (TLS certificate or SASL login)
    connection_id: int = 0  # the connection it arrived on (share sessions end with it)


def read_header(frame: bytes, flexible: bool | None = None) -> RequestHeader:
    """Parse the request header; ``flexible`` says whether it carries tagged fields."""
    try:
        api_key, api_version, correlation_id = _HEAD.unpack_from(frame, 0)
        (length,) = _INT16.unpack_from(frame, 8)
        offset = 10
        client_id = None
        if length >= 0:
            client_id = frame[offset : offset + length].decode("utf-8", errors="replace")
            offset += length
        if offset > len(frame):
            raise MalformedRequest("request header runs past the frame")
        if flexible:
            offset = skip_tagged_fields(frame, offset)
    except (struct.error, IndexError, ValueError) as error:
        raise MalformedRequest(f"truncated request header: {error}") from None
    return RequestHeader(api_key, api_version, correlation_id, client_id, offset)


def skip_tagged_fields(buffer: bytes, offset: int) -> int:
    """Skip a header's tagged-field section (Kafka's readers skip tags they do not know),
    returning the offset after it."""
    count, offset = read_uvarint(buffer, offset)
    for _ in range(count):
        _, offset = read_uvarint(buffer, offset)
        size, offset = read_uvarint(buffer, offset)
        offset += size
    if offset > len(buffer):
        raise MalformedRequest("request header's tagged fields run past the frame")
    return offset


def is_flexible_request(api_key: int, api_version: int) -> bool:
    schema = request_schema(api_key, api_version)
    return bool(schema.__header_schema__.__flexible__)


def decode_request(
    frame: bytes,
    client_host: str = "",
    listener_name: str = "",
    principal: str = "User:ANONYMOUS",
    connection_id: int = 0,
) -> Request:
    """Decode a whole frame (without its size prefix) whose API/version is supported."""
    header = read_header(frame)
    schema = request_schema(header.api_key, header.api_version)
    header = read_header(frame, bool(schema.__header_schema__.__flexible__))
    try:
        body = decode_body(schema, frame, header.body_offset)
    except MalformedBody as error:
        raise MalformedRequest(f"cannot decode request: {error}") from None
    return Request(header, body, len(frame), client_host, listener_name, principal, connection_id)


def encode_response(api_key: int, api_version: int, correlation_id: int, body: Any) -> bytes:
    """The whole response frame (size prefix included) for ``body``."""
    schema = response_schema(api_key, api_version)
    buffer = io.BytesIO()
    buffer.write(b"\0\0\0\0")
    buffer.write(_INT32.pack(correlation_id))
    if schema.__header_schema__.__flexible__:
        buffer.write(b"\0")  # no tagged fields in the response header
    entity_writer(schema)(buffer, body)
    frame = buffer.getbuffer()
    SIZE.pack_into(frame, 0, len(frame) - 4)
    return bytes(frame)


__all__ = [
    "SIZE",
    "MalformedRequest",
    "Request",
    "RequestHeader",
    "decode_request",
    "encode_response",
    "is_flexible_request",
    "read_header",
    "request_schema",
    "response_schema",
]
