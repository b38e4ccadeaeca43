"""Hand-encoded ProduceResponse v3-v13: building kio entities costs more than the append.

Tests decode its output with kio.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

from odradek.broker.protocol.leader_hints import (
    CurrentLeader,
    NodeEndpoint,
    encode_node_endpoints,
)
from odradek.broker.protocol.wire_primitives import (
    array_length,
    nullable_string,
    tagged_section,
    topic_key,
)

_PARTITION_HEAD = struct.Struct(">ihqq")  # index, error_code, base_offset, log_append_time
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
FLEXIBLE_FROM = 9
LEADER_HINTS_FROM = 10  # KIP-951
TOPIC_IDS_FROM = 13  # topics are named by id (KIP-516)
_CURRENT_LEADER_TAG = 0
_NODE_ENDPOINTS_TAG = 0


@dataclass(frozen=True, slots=True)
class ProducedPartition:
    index: int
    error_code: int
    base_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = -1
    error_message: str | None = None
    current_leader: CurrentLeader | None = None


@dataclass(frozen=True, slots=True)
class ProducedTopic:
    name: str
    partitions: list[ProducedPartition] = field(default_factory=list)
    topic_id: uuid.UUID | None = None


def encode_produce_response(
    version: int,
    topics: Sequence[ProducedTopic],
    throttle_ms: int = 0,
    node_endpoints: Sequence[NodeEndpoint] = (),
) -> bytes:
    """The response body (no header). ``node_endpoints`` (v10+) locate the leaders that
    partitions' ``current_leader`` name."""
    flexible = version >= FLEXIBLE_FROM
    hints = version >= LEADER_HINTS_FROM
    out = bytearray(array_length(len(topics), flexible))
    for topic in topics:
        out += topic_key(topic.name, topic.topic_id, version >= TOPIC_IDS_FROM, flexible)
        out += array_length(len(topic.partitions), flexible)
        for partition in topic.partitions:
            out += _PARTITION_HEAD.pack(
                partition.index,
                partition.error_code,
                partition.base_offset,
                partition.log_append_time,
            )
            if version >= 5:
                out += _I64.pack(partition.log_start_offset)
            if version >= 8:
                out += array_length(0, flexible)  # record errors: none
                out += nullable_string(partition.error_message, flexible)
            if flexible:
                leader = partition.current_leader if hints else None
                out += tagged_section([(_CURRENT_LEADER_TAG, leader.encoded())] if leader else [])
        if flexible:
            out += b"\0"  # topic tagged fields
    out += _I32.pack(throttle_ms)
    if flexible:
        endpoints = hints and node_endpoints
        fields = [(_NODE_ENDPOINTS_TAG, encode_node_endpoints(node_endpoints))] if endpoints else []
        out += tagged_section(fields)
    return bytes(out)
