"""Kafka's variable-length integers: unsigned (compact lengths, tags) and zigzag-signed
(record fields)."""

from __future__ import annotations

MAX_SHIFT = 63


def read_uvarint(buffer: bytes, offset: int) -> tuple[int, int]:
    """Return (value, offset after it) of an unsigned varint."""
    value = shift = 0
    while True:
        byte = buffer[offset]
        offset += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, offset
        shift += 7
        if shift > MAX_SHIFT:
            raise ValueError("varint too long")


def write_uvarint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_varint(buffer: bytes, position: int) -> tuple[int, int]:
    """A zigzag-encoded signed varint (varlong) and the position after it (read inline, not
    through ``read_uvarint``: records hold several each)."""
    byte = buffer[position]
    position += 1
    zigzag = byte & 0x7F
    shift = 7
    while byte & 0x80:
        if shift > MAX_SHIFT:
            raise ValueError("varint too long")
        byte = buffer[position]
        position += 1
        zigzag |= (byte & 0x7F) << shift
        shift += 7
    return (zigzag >> 1) ^ -(zigzag & 1), position


def write_varint(value: int) -> bytes:
    return write_uvarint((value << 1) ^ (value >> 63))
