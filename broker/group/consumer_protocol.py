"""The one piece of the opaque consumer protocol the coordinator reads: subscribed topics.

A ``ConsumerProtocolSubscription`` (any version 0-3) starts with version i16 and
an array (i32 count) of topic names (i16 length + UTF-8); OffsetDelete and
offset expiry need those names, everything after them is left alone.
"""

from __future__ import annotations

import struct

CONSUMER_PROTOCOL_TYPE = "consumer"

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


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
