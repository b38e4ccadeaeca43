"""Hand-encoded ProduceResponse v3-v9: building kio entities costs more than the append.

Tests decode its output with kio.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

from odradek.broker.protocol.wire_primitives import array_length, nullable_string, string

_PARTITION_HEAD = struct.Struct(">ihqq")  # index, error_code, base_offset, log_append_time
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
FLEXIBLE_FROM = 9


@dataclass(frozen=True, slots=True)
class ProducedPartition:
    index: int
    error_code: int
    base_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = -1
    error_message: str | None = None


def encode_produce_response(
    version: int, topics: Sequence[tuple[str, Sequence[ProducedPartition]]], throttle_ms: int = 0
) -> bytes:
    """The response body (no header) for ``(topic name, partitions)`` pairs."""
    flexible = version >= FLEXIBLE_FROM
    out = bytearray(array_length(len(topics), flexible))
    for name, partitions in topics:
        out += string(name, flexible)
        out += array_length(len(partitions), flexible)
        for partition in partitions:
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
                out += b"\0"  # partition tagged fields
        if flexible:
            out += b"\0"  # topic tagged fields
    out += _I32.pack(throttle_ms)
    if flexible:
        out += b"\0"  # response tagged fields
    return bytes(out)
