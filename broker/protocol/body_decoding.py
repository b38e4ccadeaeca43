"""Decoding a request or response body with kio's native reader, safely.

kio's native reader believes the element count an array states: it reserves room for
that many elements before reading the first, and when the kernel refuses the
reservation the Rust allocator aborts the whole process. A compact array may state
2**32 - 2 elements (32 GiB of pointers), which a kernel that does not overcommit freely
refuses, so five bytes from any client could kill the broker. Kafka's parser refuses a
count larger than the bytes that remain; so does the walk here, which follows the schema
as kio's reader does before kio sees the body. The same walk finds tagged fields the
schema does not declare: Kafka's readers skip them, kio's raises, so they are dropped.

The walk is compiled once per schema from kio's own field classification (the one its
native reader compiles), with runs of fixed-size fields merged into one step.
"""

from __future__ import annotations

import dataclasses
import functools
import struct
from collections.abc import Callable
from typing import Any

from kio.serial import _introspect as kio_fields
from kio.serial import entity_reader

from odradek.broker.protocol.varint import read_uvarint, write_uvarint

_FIXED_SIZES = {
    "bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "error_code": 2,
    "int32": 4, "uint32": 4, "timedelta_i32": 4, "int64": 8, "uint64": 8, "float64": 8,
    "timedelta_i64": 8, "datetime_i64": 8, "uuid": 16,
}  # fmt: skip
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")


class MalformedBody(ValueError):
    """The body does not follow its schema."""


@dataclasses.dataclass(slots=True)
class _Walk:
    end: int
    # Tagged-field sections holding undeclared tags: (start, end, the section without them).
    rewrites: list[tuple[int, int, bytes]] = dataclasses.field(default_factory=list)


_Step = Callable[[bytes, int, _Walk], int]
_Part = int | _Step  # how to walk one value: a fixed number of bytes, or a step


def decode_body(schema: type, buffer: bytes, offset: int) -> Any:
    """The kio entity of ``schema`` at ``offset``, once the walk has accepted the body."""
    buffer = checked_body(schema, buffer, offset)
    try:
        entity: Any
        entity, _ = entity_reader(schema)(buffer, offset)
    except Exception as error:  # kio's native reader raises several types
        raise MalformedBody(str(error)) from None
    return entity


def checked_body(schema: type, buffer: bytes, offset: int) -> bytes:
    """``buffer``, without undeclared tagged fields, if the body at ``offset`` follows
    ``schema`` with no array claiming more elements than bytes remain."""
    walk = _Walk(len(buffer))
    part = _entity_part(schema, False)
    try:
        end = offset + part if isinstance(part, int) else part(buffer, offset, walk)
    except (IndexError, struct.error, ValueError) as error:
        raise MalformedBody(f"body runs past its frame: {error}") from None
    if end > len(buffer):
        raise MalformedBody("body runs past its frame")
    if not walk.rewrites:
        return buffer
    pieces, position = [], 0
    for start, stop, section in sorted(walk.rewrites):
        if start < position:
            continue  # inside a section rewritten here: the next walk drops its tags
        pieces += [buffer[position:start], section]
        position = stop
    pieces.append(buffer[position:])
    return checked_body(schema, b"".join(pieces), offset)


@functools.cache
def _entity_part(entity: type, nullable: bool) -> _Part:
    flexible = bool(entity.__flexible__)  # type: ignore[attr-defined]
    parts: list[_Part] = []
    tagged: dict[int, _Part] = {}
    for field in dataclasses.fields(entity):
        tag = kio_fields.get_field_tag(field)
        part = _field_part(field, flexible)
        if tag is not None:
            tagged[tag] = part
        elif parts and isinstance(part, int) and isinstance(parts[-1], int):
            parts[-1] += part
        else:
            parts.append(part)
    if not flexible and not nullable and all(isinstance(part, int) for part in parts):
        return sum(parts)  # type: ignore[arg-type]
    return _entity_step(tuple(parts), tagged if flexible else None, nullable)


def _entity_step(
    parts: tuple[_Part, ...], tagged: dict[int, _Part] | None, nullable: bool
) -> _Step:
    def walk_entity(buffer: bytes, position: int, walk: _Walk) -> int:
        if nullable:
            position += 1
            if buffer[position - 1] == 0xFF:  # int8 -1: null
                return position
        for part in parts:
            position = position + part if isinstance(part, int) else part(buffer, position, walk)
        if tagged is None:
            return position
        if buffer[position] == 0:  # no tagged fields, the usual case
            return position + 1
        return _walk_tags(tagged, buffer, position, walk)

    return walk_entity


def _walk_tags(tagged: dict[int, _Part], buffer: bytes, position: int, walk: _Walk) -> int:
    start = position
    count, position = read_uvarint(buffer, position)
    _check_count(count, 2, position, walk)  # a tag and a size, at least
    kept: list[bytes] = []
    for _ in range(count):
        field_start = position
        tag, position = read_uvarint(buffer, position)
        size, position = read_uvarint(buffer, position)
        part = tagged.get(tag)
        if part is None:
            position += size
        else:  # kio's reader goes on where the value ends, whatever the size said
            position = position + part if isinstance(part, int) else part(buffer, position, walk)
            kept.append(buffer[field_start:position])
    if len(kept) < count:
        walk.rewrites.append((start, position, write_uvarint(len(kept)) + b"".join(kept)))
    return position


def _field_part(field: dataclasses.Field[Any], flexible: bool) -> _Part:
    kind = kio_fields.classify_field(field)
    element: _Part
    if isinstance(kind, (kio_fields.EntityField, kio_fields.EntityTupleField)):
        nullable = isinstance(kind, kio_fields.EntityField) and kio_fields.is_optional(field)
        element = _entity_part(kind.type_, nullable)
    else:
        element = _primitive_part(kio_fields.get_schema_field_type(field), flexible)
    if isinstance(kind, (kio_fields.PrimitiveTupleField, kio_fields.EntityTupleField)):
        return _array_step(element, flexible)
    return element


def _primitive_part(kafka_type: str, flexible: bool) -> _Part:
    if kafka_type in _FIXED_SIZES:
        return _FIXED_SIZES[kafka_type]
    if kafka_type not in ("string", "bytes", "records"):
        raise TypeError(f"no walk for kafka_type {kafka_type}")
    if flexible:
        return _skip_compact_bytes
    return _skip_int16_bytes if kafka_type == "string" else _skip_int32_bytes


def _skip_compact_bytes(buffer: bytes, position: int, walk: _Walk) -> int:
    size = buffer[position]
    if size < 0x80:
        return position + max(size, 1)  # 0 (null) and 1 (empty) are one byte
    size, position = read_uvarint(buffer, position)
    return position + size - 1


def _skip_int16_bytes(buffer: bytes, position: int, walk: _Walk) -> int:
    size: int = _INT16.unpack_from(buffer, position)[0]
    return position + 2 + max(size, 0)


def _skip_int32_bytes(buffer: bytes, position: int, walk: _Walk) -> int:
    size: int = _INT32.unpack_from(buffer, position)[0]
    return position + 4 + max(size, 0)


def _array_step(element: _Part, compact: bool) -> _Step:
    least_bytes_each = max(element, 1) if isinstance(element, int) else 1

    def walk_array(buffer: bytes, position: int, walk: _Walk) -> int:
        if compact:
            count, position = read_uvarint(buffer, position)
            count -= 1
        else:
            count = _INT32.unpack_from(buffer, position)[0]
            position += 4
        if count <= 0:
            return position  # empty, null, or a negative count kio's reader refuses
        _check_count(count, least_bytes_each, position, walk)
        if isinstance(element, int):
            return position + count * element
        for _ in range(count):
            position = element(buffer, position, walk)
        return position

    return walk_array


def _check_count(count: int, least_bytes_each: int, position: int, walk: _Walk) -> None:
    if count * least_bytes_each > walk.end - position:
        raise MalformedBody(
            f"an array claims {count} elements where {max(walk.end - position, 0)} bytes remain"
        )
