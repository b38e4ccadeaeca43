"""Kafka's encodings of array lengths and strings, for the hand-written response encoders."""

from __future__ import annotations

import struct
import uuid
from collections.abc import Sequence

from odradek.broker.protocol.varint import write_uvarint

INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")
_NULL_STRING = INT16.pack(-1)
NO_TOPIC_ID = uuid.UUID(int=0)


def array_length(count: int, flexible: bool) -> bytes:
    return write_uvarint(count + 1) if flexible else INT32.pack(count)


def string(value: str, flexible: bool) -> bytes:
    encoded = value.encode()
    if flexible:
        return write_uvarint(len(encoded) + 1) + encoded
    return INT16.pack(len(encoded)) + encoded


def nullable_string(value: str | None, flexible: bool) -> bytes:
    if value is None:
        return b"\0" if flexible else _NULL_STRING
    return string(value, flexible)


def topic_key(name: str, topic_id: uuid.UUID | None, by_id: bool, flexible: bool) -> bytes:
    """How a response names a topic: by id from the versions of KIP-516 (the zero id for
    one the broker does not know), else by name."""
    return (topic_id or NO_TOPIC_ID).bytes if by_id else string(name, flexible)


def tagged_section(fields: Sequence[tuple[int, bytes]]) -> bytes:
    """A flexible entity's tagged fields: ``(tag, encoded value)`` pairs in tag order."""
    out = bytearray(write_uvarint(len(fields)))
    for tag, value in fields:
        out += write_uvarint(tag) + write_uvarint(len(value)) + value
    return bytes(out)
