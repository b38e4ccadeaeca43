"""The pieces of the opaque consumer protocol the coordinator reads and writes.

``ConsumerProtocolSubscription`` (versions 0-3: topics, user data, owned partitions,
generation, rack) and ``ConsumerProtocolAssignment``, big-endian with i16-length strings:
OffsetDelete and offset expiry need a classic member's topics, a classic member of a
KIP-848 group its subscription and assignment; DescribeGroups shows a KIP-848 member's
subscription and assignment in the same format (version 0).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from odradek.broker.protocol.record_fields import FieldReader, RecordFormatError

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


@dataclass(frozen=True)
class Subscription:
    """A ``ConsumerProtocolSubscription``: its topics, the partitions the member owns
    (v1+, cooperative clients) and its rack (v3+)."""

    topics: frozenset[str]
    owned: Mapping[str, tuple[int, ...]]
    rack: str | None = None


def decode_subscription(data: bytes) -> Subscription:
    """The subscription in ``data`` (RecordFormatError if it is not one)."""
    reader = FieldReader(data)
    version = reader.i16()
    topics = frozenset(reader.text() for _ in range(reader.count()))
    reader.nullable_blob()  # user data
    owned: dict[str, tuple[int, ...]] = {}
    rack = None
    if version >= 1:
        for _ in range(reader.count()):
            topic = reader.text()
            owned[topic] = tuple(reader.i32() for _ in range(reader.count()))
    if version >= 2:
        reader.i32()  # generation
    if version >= 3:
        rack = reader.string()
    return Subscription(topics, owned, rack)


def decode_assignment(data: bytes) -> dict[str, tuple[int, ...]]:
    """The partitions of a ``ConsumerProtocolAssignment`` (any version; empty: none)."""
    if not data:
        return {}
    reader = FieldReader(data)
    reader.i16()
    return {
        reader.text(): tuple(reader.i32() for _ in range(reader.count()))
        for _ in range(reader.count())
    }


def subscribed_topics(subscription: bytes) -> frozenset[str] | None:
    """The topics of a consumer's subscription, or None if the bytes are not one."""
    try:
        return decode_subscription(subscription).topics
    except RecordFormatError:
        return None
