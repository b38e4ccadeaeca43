"""Hand-encoded FetchResponse v4-v12, so record data can be sent from files.

The encoder emits a list of chunks: encoded bytes interleaved with the record
data objects the caller passed in (file regions, sent with sendfile), never
copying the records themselves. Tests decode its output with kio.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from odradek.broker.protocol.varint import write_uvarint
from odradek.broker.protocol.wire_primitives import array_length, string

T = TypeVar("T")

_I32 = struct.Struct(">i")
_TOP_V7 = struct.Struct(">ihi")  # throttle_time, error_code, session_id
_PARTITION_HEAD = struct.Struct(">ihqq")  # index, error_code, high_watermark, last_stable_offset
_I64 = struct.Struct(">q")
FLEXIBLE_FROM = 12


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


@dataclass(frozen=True)
class FetchedTopic(Generic[T]):
    name: str
    partitions: list[FetchedPartition[T]] = field(default_factory=list)


def encode_fetch_response(
    version: int, topics: Sequence[FetchedTopic[T]], error_code: int = 0, session_id: int = 0
) -> list[bytes | T]:
    """The response body as chunks; ``T`` items are the callers' record data, in place."""
    flexible = version >= FLEXIBLE_FROM
    chunks: list[bytes | T] = []
    out = bytearray()
    if version >= 7:
        out += _TOP_V7.pack(0, error_code, session_id)
    else:
        out += _I32.pack(0)
    out += array_length(len(topics), flexible)
    for topic in topics:
        out += string(topic.name, flexible)
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
            out += array_length(0, flexible)  # aborted transactions: none
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
                out += b"\0"  # partition tagged fields
        if flexible:
            out += b"\0"  # topic tagged fields
    if flexible:
        out += b"\0"  # response tagged fields
    chunks.append(bytes(out))
    return chunks
