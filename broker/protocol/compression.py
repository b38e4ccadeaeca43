"""Kafka's record batch codecs, byte-compatible with what the Java client writes.

The codec id is the low three bits of a batch's attributes. Each codec follows
Kafka's framing, not just the algorithm's:

- gzip (1): one gzip member, zlib's default level as Java's ``GZIPOutputStream``.
- snappy (2): xerial block framing (``\\x82SNAPPY\\0``, version and compat as
  big-endian int32, then blocks of at most 32 KiB of input, each prefixed by its
  big-endian compressed length). Raw snappy without that header is accepted on
  reading, as Kafka accepts it.
- lz4 (3): one LZ4 frame with independent blocks and no content size
  (FLG 0x60, BD 0x40); Java rejects linked blocks.
- zstd (4): streaming frames without content size, which
  ``ZstdDecompressor.decompress`` refuses, so frames are read incrementally.

Decompression reads concatenated frames (gzip members) and refuses empty or
truncated input, which the one-shot helpers of gzip and lz4 silently accept.

Failures raise ``KafkaError``: UNSUPPORTED_COMPRESSION_TYPE for a codec id
Kafka does not define, CORRUPT_MESSAGE for data the codec cannot read.
"""

from __future__ import annotations

import functools
import gzip
import struct
import zlib
from collections.abc import Callable
from typing import Protocol, TypeAlias

import cramjam
import lz4.frame
import zstandard

from odradek.broker.protocol.errors import ErrorCode, KafkaError

Buffer: TypeAlias = bytes | bytearray | memoryview

NONE = 0
GZIP = 1
SNAPPY = 2
LZ4 = 3
ZSTD = 4

CODEC_NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}

_GZIP_WBITS = 16 + zlib.MAX_WBITS  # zlib's switch for the gzip wrapper
_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_XERIAL_BLOCK_SIZE = 32 * 1024
_BLOCK_LENGTH = struct.Struct(">i")

_ZSTD_DECOMPRESSOR = zstandard.ZstdDecompressor()


class _FrameDecompressor(Protocol):
    """What lz4's ``LZ4FrameDecompressor`` and zstandard's decompressobj share."""

    @property
    def eof(self) -> bool: ...

    @property
    def unused_data(self) -> bytes: ...

    def decompress(self, data: Buffer, /) -> bytes: ...


def compress(codec: int, data: Buffer, level: int | None = None) -> bytes:
    """Compress a batch's records section with codec ``codec`` (0 returns it unchanged).

    ``level`` is the codec's level as Kafka's compression.<codec>.level sets it (-1 for
    gzip: zlib's default); None keeps each codec's default. Snappy has no levels.
    """
    if codec == NONE:
        return bytes(data)
    if codec == GZIP:
        return gzip.compress(data, compresslevel=6 if level in (None, -1) else level, mtime=0)
    if codec == SNAPPY:
        return _xerial_compress(data)
    if codec == LZ4:
        compressed: bytes = lz4.frame.compress(
            data, compression_level=level or 0, block_linked=False, store_size=False
        )
        return compressed
    if codec == ZSTD:
        return _zstd_compressor(level).compress(data)
    raise _unsupported(codec)


@functools.cache
def _zstd_compressor(level: int | None) -> zstandard.ZstdCompressor:
    return zstandard.ZstdCompressor(level=3 if level is None else level, write_content_size=False)


def decompress(codec: int, data: Buffer) -> bytes:
    """Decompress a batch's records section written with codec ``codec``."""
    if codec == NONE:
        return bytes(data)
    if codec not in CODEC_NAMES:
        raise _unsupported(codec)
    try:
        if codec == GZIP:
            return _decompress_frames(_new_gzip_decompressor, data)
        if codec == SNAPPY:
            return _snappy_decompress(data)
        if codec == LZ4:
            return _decompress_frames(lz4.frame.LZ4FrameDecompressor, data)
        return _decompress_frames(_ZSTD_DECOMPRESSOR.decompressobj, data)
    except (
        zlib.error,
        RuntimeError,
        cramjam.DecompressionError,
        zstandard.ZstdError,
    ) as error:
        raise KafkaError(
            ErrorCode.corrupt_message, f"cannot decompress {CODEC_NAMES[codec]} records: {error}"
        ) from error


def _unsupported(codec: int) -> KafkaError:
    return KafkaError(
        ErrorCode.unsupported_compression_type, f"unknown compression codec id {codec}"
    )


def _new_gzip_decompressor() -> _FrameDecompressor:
    return zlib.decompressobj(wbits=_GZIP_WBITS)


def _xerial_compress(data: Buffer) -> bytes:
    view = memoryview(data)
    parts = [_XERIAL_HEADER]
    for start in range(0, len(view), _XERIAL_BLOCK_SIZE):
        block = bytes(cramjam.snappy.compress_raw(view[start : start + _XERIAL_BLOCK_SIZE]))
        parts.append(_BLOCK_LENGTH.pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def _snappy_decompress(data: Buffer) -> bytes:
    view = memoryview(data)
    if view[: len(_XERIAL_MAGIC)] != _XERIAL_MAGIC:
        return bytes(cramjam.snappy.decompress_raw(view))
    parts: list[bytes] = []
    position = 0
    while position < len(view):
        # Concatenated xerial streams repeat the header; version and compat are
        # ignored because some producers write them little-endian.
        if view[position : position + len(_XERIAL_MAGIC)] == _XERIAL_MAGIC:
            if len(view) - position < len(_XERIAL_HEADER):
                raise RuntimeError("truncated xerial header")
            position += len(_XERIAL_HEADER)
            continue
        if len(view) - position < _BLOCK_LENGTH.size:
            raise RuntimeError("truncated xerial block length")
        (length,) = _BLOCK_LENGTH.unpack_from(view, position)
        position += _BLOCK_LENGTH.size
        if length < 0 or position + length > len(view):
            raise RuntimeError(f"xerial block length {length} out of bounds")
        parts.append(bytes(cramjam.snappy.decompress_raw(view[position : position + length])))
        position += length
    return b"".join(parts)


def _decompress_frames(new_decompressor: Callable[[], _FrameDecompressor], data: Buffer) -> bytes:
    """Read one or more concatenated frames (gzip members), refusing a truncated one."""
    parts: list[bytes] = []
    remaining: Buffer = data
    while True:
        decompressor = new_decompressor()
        parts.append(decompressor.decompress(remaining))
        if not decompressor.eof:
            raise RuntimeError("truncated frame")
        remaining = decompressor.unused_data
        if not remaining:
            return b"".join(parts)
