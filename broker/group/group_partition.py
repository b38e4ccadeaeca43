"""Which ``__consumer_offsets`` partition holds a group: Kafka's placement, bit for bit.

Kafka takes ``Utils.abs(groupId.hashCode()) % partitions``, where ``hashCode`` is
Java's ``String.hashCode`` over UTF-16 code units and ``Utils.abs`` masks the
sign bit, so clients and tools that compute the coordinator agree with us.
"""

from __future__ import annotations

from odradek.broker.cluster.coordinator_partitions import java_string_hashcode

OFFSETS_TOPIC = "__consumer_offsets"


def partition_for_group(group_id: str, partitions: int) -> int:
    return (java_string_hashcode(group_id) & 0x7FFFFFFF) % partitions
