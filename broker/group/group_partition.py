"""Which ``__consumer_offsets`` partition holds a group: Kafka's placement, bit for bit.

Kafka takes ``Utils.abs(groupId.hashCode()) % partitions``, where ``hashCode`` is
Java's ``String.hashCode`` over UTF-16 code units and ``Utils.abs`` masks the
sign bit, so clients and tools that compute the coordinator agree with us.
"""

from __future__ import annotations

OFFSETS_TOPIC = "__consumer_offsets"


def java_string_hashcode(text: str) -> int:
    """Java's ``String.hashCode``: a signed 32-bit ``s[0]*31^(n-1) + ... + s[n-1]``."""
    units = text.encode("utf-16-be")
    value = 0
    for index in range(0, len(units), 2):
        value = (value * 31 + (units[index] << 8 | units[index + 1])) & 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


def partition_for_group(group_id: str, partitions: int) -> int:
    return (java_string_hashcode(group_id) & 0x7FFFFFFF) % partitions
