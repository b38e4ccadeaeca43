"""The pieces of the opaque consumer protocol the coordinator reads and writes.

A ``ConsumerProtocolSubscription`` (any version 0-3) starts with version i16 and
an array (i32 count) of topic names (i16 length + UTF-8); OffsetDelete and
offset expiry need those names, everything after them is left alone. DescribeGroups
shows a KIP-848 member's subscription and assignment in the same format (version 0).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping

CONSUMER_PROTOCOL_TYPE = "consumer"

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


def subscription_bytes(topics: Iterable[str]) -> bytes:
    """A version 0 ``ConsumerProtocolSubscription`` of these topics, no user data."""
    names = sorted(topics)
    out = bytearray(_I16.pack(0) + _I32.pack(len(names)))
    for name in names:
        out += _string(name)
    return bytes(out + _I32.pack(-1))


def assignment_bytes(partitions: Mapping[str, Iterable[int]]) -> bytes:
    """A version 0 ``ConsumerProtocolAssignment`` of these partitions, no user data."""
    out = bytearray(_I16.pack(0) + _I32.pack(len(partitions)))
    for topic, indexes in sorted(partitions.items()):
        listed = sorted(indexes)
        out += _string(topic) + _I32.pack(len(listed))
        for index in listed:
            out += _I32.pack(index)
    return bytes(out + _I32.pack(-1))


def _string(text: str) -> bytes:
    encoded = text.encode()
    return _I16.pack(len(encoded)) + encoded


def subscribed_topics(subscription: bytes) -> frozenset[str] | None:
    """The topics of a consumer's subscription, or None if the bytes are not one."""
    try:
        position = _I16.size
        (count,) = _I32.unpack_from(subscription, position)
        position += _I32.size
        if count < 0:
            return None
        topics = set()
        for _ in range(count):
            (length,) = _I16.unpack_from(subscription, position)
            position += _I16.size
            if length < 0 or position + length > len(subscription):
                return None
            topics.add(subscription[position : position + length].decode())
            position += length
    except (struct.error, UnicodeDecodeError):
        return None
    return frozenset(topics)
