"""Tagged fields: skipping them in headers, dropping unknown ones from bodies.

Kafka's rule is that a reader skips tagged fields it does not know. kio's
native reader raises on them instead, so a body that has some is rewritten
without them (walking the request schema) and decoded again.
"""

from __future__ import annotations

import dataclasses
import functools
import struct
import types
import typing
from typing import Any

from odradek.broker.protocol.varint import read_uvarint, write_uvarint

_FIXED_SIZES = {
    "bool": 1, "int8": 1, "int16": 2, "uint16": 2, "int32": 4, "int64": 8,
    "float64": 8, "uuid": 16, "timedelta_i32": 4, "timedelta_i64": 8, "error_code": 2,
}  # fmt: skip
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


def skip_tagged_fields(buffer: bytes, offset: int) -> int:
    """Skip a tagged-field section, returning the offset after it."""
    count, offset = read_uvarint(buffer, offset)
    for _ in range(count):
        _, offset = read_uvarint(buffer, offset)
        size, offset = read_uvarint(buffer, offset)
        offset += size
    if offset > len(buffer):
        raise ValueError("tagged fields run past the buffer")
    return offset


def strip_unknown_tagged_fields(schema: type, body: bytes) -> bytes:
    """``body`` re-encoded with only the tagged fields ``schema`` declares."""
    out = bytearray()
    _copy_entity(schema, body, 0, out)
    return bytes(out)


@functools.cache
def _layout(cls: type) -> tuple[list[tuple[Any, str | None]], frozenset[int]]:
    hints = typing.get_type_hints(cls)
    plain, tags = [], set()
    for field in dataclasses.fields(cls):
        tag = field.metadata.get("tag")
        if tag is not None:
            tags.add(tag)
        elif field.init:
            plain.append((hints[field.name], field.metadata.get("kafka_type")))
    return plain, frozenset(tags)


def _copy_entity(cls: type, src: bytes, pos: int, out: bytearray) -> int:
    flexible = bool(getattr(cls, "__flexible__", False))
    plain, known_tags = _layout(cls)
    for hint, kafka_type in plain:
        pos = _copy_value(hint, kafka_type, flexible, src, pos, out)
    if flexible:
        count, pos = read_uvarint(src, pos)
        kept = []
        for _ in range(count):
            tag, pos = read_uvarint(src, pos)
            size, pos = read_uvarint(src, pos)
            if tag in known_tags:
                kept.append(write_uvarint(tag) + write_uvarint(size) + src[pos : pos + size])
            pos += size
        out += write_uvarint(len(kept)) + b"".join(kept)
    return pos


def _copy_value(
    hint: Any, kafka_type: str | None, flexible: bool, src: bytes, pos: int, out: bytearray
) -> int:
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        hint = next(arg for arg in typing.get_args(hint) if arg is not type(None))
    start = pos
    if typing.get_origin(hint) is tuple:
        count, pos = _read_length(src, pos, flexible, array=True)
        out += src[start:pos]
        for _ in range(max(count, 0)):
            pos = _copy_value(typing.get_args(hint)[0], kafka_type, flexible, src, pos, out)
        return pos
    if dataclasses.is_dataclass(hint):
        return _copy_entity(hint, src, pos, out)  # type: ignore[arg-type]
    if kafka_type in _FIXED_SIZES:
        pos += _FIXED_SIZES[kafka_type]
    elif kafka_type in ("string", "bytes", "records"):
        size, pos = _read_length(src, pos, flexible, array=kafka_type != "string")
        pos += max(size, 0)
    else:
        raise ValueError(f"cannot skip field of type {kafka_type}")
    out += src[start:pos]
    return pos


def _read_length(src: bytes, pos: int, flexible: bool, array: bool) -> tuple[int, int]:
    if flexible:
        value, pos = read_uvarint(src, pos)
        return value - 1, pos
    if array:
        return _INT32.unpack_from(src, pos)[0], pos + 4
    return _INT16.unpack_from(src, pos)[0], pos + 2
