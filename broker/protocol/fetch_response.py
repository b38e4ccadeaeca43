"""Hand-encoded FetchResponse v4-v18, so record data can be sent from files.

The encoder emits a list of chunks: encoded bytes interleaved with the record
data objects the caller passed in (file regions, sent with sendfile), never
copying the records themselves. Tests decode its output with kio.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from odradek.broker.protocol.leader_hints import (
    CurrentLeader,
    NodeEndpoint,
    encode_node_endpoints,
)
from odradek.broker.protocol.varint import write_uvarint
from odradek.broker.protocol.wire_primitives import array_length, tagged_section, topic_key

T = TypeVar("T")

_I32 = struct.Struct(">i")
_TOP_V7 = struct.Struct(">ihi")  # throttle_time, error_code, session_id
_PARTITION_HEAD = struct.Struct(">ihqq")  # index, error_code, high_watermark, last_stable_offset
_I64 = struct.Struct(">q")
_ABORTED = struct.Struct(">qq")  # producer_id, first_offset
FLEXIBLE_FROM = 12
TOPIC_IDS_FROM = 13  # topics are named by id (KIP-516)
NODE_ENDPOINTS_FROM = 16  # KIP-951
_CURRENT_LEADER_TAG = 1
_NODE_ENDPOINTS_TAG = 0


@dataclass(frozen=True)
class FetchedPartition(Generic[T]):
    partition_index: int
    error_code: int
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    records: Sequence[T] = ()
    records_size: int = 0
    preferred_read_replica: int = -1
    current_leader: CurrentLeader | None = None
    aborted_transactions: Sequence[tuple[int, int]] = ()
    """(producer id, first offset) of each aborted transaction the records overlap."""


@dataclass(frozen=True)
class FetchedTopic(Generic[T]):
    name: str
    partitions: list[FetchedPartition[T]] = field(default_factory=list)
    topic_id: uuid.UUID | None = None


def encode_fetch_response(
    version: int,
    topics: Sequence[FetchedTopic[T]],
    error_code: int = 0,
    session_id: int = 0,
    node_endpoints: Sequence[NodeEndpoint] = (),
    throttle_ms: int = 0,
) -> list[bytes | T]:
    """The response body as chunks; ``T`` items are the callers' record data, in place.
    ``node_endpoints`` (v16+) locate the leaders that partitions' ``current_leader`` name."""
    flexible = version >= FLEXIBLE_FROM
    chunks: list[bytes | T] = []
    out = bytearray()
    if version >= 7:
        out += _TOP_V7.pack(throttle_ms, error_code, session_id)
    else:
        out += _I32.pack(throttle_ms)
    out += array_length(len(topics), flexible)
    for topic in topics:
        out += topic_key(topic.name, topic.topic_id, version >= TOPIC_IDS_FROM, flexible)
        out += array_length(len(topic.partitions), flexible)
        for partition in topic.partitions:
            out += _PARTITION_HEAD.pack(
                partition.partition_index,
                partition.error_code,
                partition.high_watermark,
                partition.last_stable_offset,
            )
            if version >= 5:
                out += _I64.pack(partition.log_start_offset)
            out += array_length(len(partition.aborted_transactions), flexible)
            for producer_id, first_offset in partition.aborted_transactions:
                out += _ABORTED.pack(producer_id, first_offset)
                if flexible:
                    out += b"\0"
            if version >= 11:
                out += _I32.pack(partition.preferred_read_replica)
            if flexible:
                out += write_uvarint(partition.records_size + 1)
            else:
                out += _I32.pack(partition.records_size)
            if partition.records:
                chunks.append(bytes(out))
                chunks.extend(partition.records)
                out = bytearray()
            if flexible:
                leader = partition.current_leader
                hint = [(_CURRENT_LEADER_TAG, leader.encoded())] if leader else []
                out += tagged_section(hint)
        if flexible:
            out += b"\0"  # topic tagged fields
    if flexible:
        endpoints = version >= NODE_ENDPOINTS_FROM and node_endpoints
        fields = [(_NODE_ENDPOINTS_TAG, encode_node_endpoints(node_endpoints))] if endpoints else []
        out += tagged_section(fields)
    chunks.append(bytes(out))
    return chunks
