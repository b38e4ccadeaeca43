"""Rewriting header fields of a v2 batch that lie inside its CRC-32C.

``records.patch_batch`` covers the two fields outside the CRC; these are for
the few places that change what the CRC covers: LogAppendTime stamping and
compaction keeping a batch's original offset span.
"""

from __future__ import annotations

import struct

from crc32c import crc32c

from ..protocol.records import TIMESTAMP_TYPE_MASK

_CRC = struct.Struct(">I")  # @17, covers bytes 21..end
_ATTRIBUTES = struct.Struct(">h")  # @21
_LAST_OFFSET_DELTA = struct.Struct(">i")  # @23
_MAX_TIMESTAMP = struct.Struct(">q")  # @35
_CRC_START = 21


def stamp_log_append_time(buffer: bytearray, position: int, size: int, now_ms: int) -> None:
    """Mark the batch at ``position`` as LogAppendTime with ``now_ms`` as its max timestamp."""
    (attributes,) = _ATTRIBUTES.unpack_from(buffer, position + 21)
    _ATTRIBUTES.pack_into(buffer, position + 21, attributes | TIMESTAMP_TYPE_MASK)
    _MAX_TIMESTAMP.pack_into(buffer, position + 35, now_ms)
    _update_crc(buffer, position, size)


def set_last_offset_delta(batch: bytearray, last_offset_delta: int) -> None:
    """Give a whole batch ``batch`` the offset span ``last_offset_delta``."""
    _LAST_OFFSET_DELTA.pack_into(batch, 23, last_offset_delta)
    _update_crc(batch, 0, len(batch))


def _update_crc(buffer: bytearray, position: int, size: int) -> None:
    covered = memoryview(buffer)[position + _CRC_START : position + size]
    _CRC.pack_into(buffer, position + 17, crc32c(covered))
