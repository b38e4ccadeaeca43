"""Kafka's codecs: round trips, and both directions against kafka-python's real encoder."""

from __future__ import annotations

import struct
import zlib

import lz4.frame
import pytest
import snappy
import zstandard
from crc32c import crc32c
from hypothesis import given
from hypothesis import strategies as st
from kafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder

from odradek.broker.protocol.compression import (
    GZIP,
    LZ4,
    NONE,
    SNAPPY,
    ZSTD,
    compress,
    decompress,
)
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.records import HEADER_SIZE, read_header

CODECS = [GZIP, SNAPPY, LZ4, ZSTD]
FRAMED_CODECS = [GZIP, LZ4, ZSTD]  # xerial snappy has no end marker to detect truncation
XERIAL_HEADER = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1)

Record = tuple[bytes | None, bytes | None, list[tuple[str, bytes]]]

RECORDS: list[Record] = [
    (f"key-{i}".encode(), b"value %d " % i * (i % 40 + 1), [("h", b"%d" % i)]) for i in range(500)
] + [(None, b"no key", []), (b"tombstone", None, [])]


def _build_batch(codec: int, records: list[Record]) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 30,
    )
    for offset, (key, value, headers) in enumerate(records):
        builder.append(
            offset, timestamp=1_700_000_000_000 + offset, key=key, value=value, headers=headers
        )
    return bytes(builder.build())


def _recompress_batch(batch: bytes, codec: int) -> bytes:
    """Swap an uncompressed batch's records for ``compress(codec, ...)``, fixing length and CRC."""
    header = read_header(batch)
    assert header.compression == NONE
    body = bytearray(batch[:HEADER_SIZE] + compress(codec, batch[HEADER_SIZE:]))
    struct.pack_into(">i", body, 8, len(body) - 12)
    struct.pack_into(">h", body, 21, header.attributes | codec)
    struct.pack_into(">I", body, 17, crc32c(bytes(body[21:])))
    return bytes(body)


def _read_records(batch: bytes) -> list[Record]:
    reader = DefaultRecordBatch(batch)
    assert reader.validate_crc()
    return [(record.key, record.value, list(record.headers)) for record in reader]


@pytest.mark.parametrize("codec", CODECS)
def test_decompresses_records_of_batches_kafka_python_compressed(codec: int) -> None:
    batch = _build_batch(codec, RECORDS)
    assert read_header(batch).compression == codec
    plain = _build_batch(NONE, RECORDS)

    assert decompress(codec, batch[HEADER_SIZE:]) == plain[HEADER_SIZE:]


@pytest.mark.parametrize("codec", CODECS)
def test_kafka_python_reads_batches_compressed_by_this_module(codec: int) -> None:
    batch = _recompress_batch(_build_batch(NONE, RECORDS), codec)

    assert read_header(batch).compression == codec
    assert _read_records(batch) == RECORDS


@given(codec=st.sampled_from([NONE, *CODECS]), data=st.binary(max_size=200_000))
def test_compress_then_decompress_returns_the_input(codec: int, data: bytes) -> None:
    assert decompress(codec, compress(codec, data)) == data


@given(codec=st.sampled_from(CODECS), data=st.binary(min_size=1, max_size=5_000))
def test_accepts_memoryview_and_bytearray_input(codec: int, data: bytes) -> None:
    compressed = compress(codec, memoryview(bytearray(data)))

    assert decompress(codec, memoryview(compressed)) == data
    assert decompress(codec, bytearray(compressed)) == data


@given(
    codec=st.sampled_from(FRAMED_CODECS),
    data=st.binary(max_size=100_000),
    cut=st.floats(min_value=0, max_value=1, exclude_max=True),
)
def test_truncated_frames_are_corrupt(codec: int, data: bytes, cut: float) -> None:
    compressed = compress(codec, data)

    with pytest.raises(KafkaError) as raised:
        decompress(codec, compressed[: int(len(compressed) * cut)])
    assert raised.value.code == ErrorCode.corrupt_message


@pytest.mark.parametrize("codec", FRAMED_CODECS)
def test_concatenated_frames_are_read_in_full(codec: int) -> None:
    assert decompress(codec, compress(codec, b"first ") + compress(codec, b"second")) == (
        b"first second"
    )


def test_lz4_writes_javas_frame_header_independent_blocks_without_content_size() -> None:
    frame = compress(LZ4, b"kafka " * 50_000)

    # magic 0x184D2204 (little-endian), FLG 0x60: version 01, independent blocks,
    # no checksums, no content size; BD 0x40: 64 KiB blocks; 0x82 header checksum.
    assert frame[:7] == bytes.fromhex("04224d18604082")
    assert lz4.frame.get_frame_info(frame)["block_linked"] is False


def test_snappy_writes_xerial_framing_with_32_kib_blocks() -> None:
    data = bytes(range(256)) * 400  # 100 KiB: four blocks of input
    stream = compress(SNAPPY, data)

    assert stream.startswith(XERIAL_HEADER)
    position, blocks = len(XERIAL_HEADER), []
    while position < len(stream):
        (length,) = struct.unpack_from(">i", stream, position)
        blocks.append(snappy.decompress(stream[position + 4 : position + 4 + length]))
        position += 4 + length
    assert [len(block) for block in blocks] == [32768, 32768, 32768, 4096]
    assert b"".join(blocks) == data


def test_snappy_accepts_raw_snappy_without_xerial_framing() -> None:
    data = b"raw snappy, as some producers send it " * 100

    assert decompress(SNAPPY, snappy.compress(data)) == data


def test_snappy_accepts_concatenated_xerial_streams_and_little_endian_version() -> None:
    little_endian = b"\x82SNAPPY\x00" + struct.pack("<ii", 1, 1)
    second = compress(SNAPPY, b"second").replace(XERIAL_HEADER, little_endian, 1)

    assert decompress(SNAPPY, compress(SNAPPY, b"first ") + second) == b"first second"


@pytest.mark.parametrize(
    "stream",
    [XERIAL_HEADER[:12], XERIAL_HEADER + b"\x00\x00", XERIAL_HEADER + b"\x00\x00\x00\x09abc"],
    ids=["truncated header", "truncated block length", "block past the end"],
)
def test_snappy_malformed_xerial_stream_is_corrupt(stream: bytes) -> None:
    with pytest.raises(KafkaError) as raised:
        decompress(SNAPPY, stream)
    assert raised.value.code == ErrorCode.corrupt_message


def test_zstd_writes_and_reads_frames_without_content_size() -> None:
    data = b"zstd streaming frame " * 1000
    writer_output = zstandard.ZstdCompressor().compressobj()
    java_like_frame = writer_output.compress(data) + writer_output.flush()

    assert zstandard.get_frame_parameters(java_like_frame).content_size == (
        zstandard.CONTENTSIZE_UNKNOWN
    )
    assert decompress(ZSTD, java_like_frame) == data
    assert zstandard.get_frame_parameters(compress(ZSTD, data)).content_size == (
        zstandard.CONTENTSIZE_UNKNOWN
    )


def test_gzip_output_is_a_standard_gzip_member() -> None:
    assert zlib.decompress(compress(GZIP, b"gzip member"), wbits=31) == b"gzip member"


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("garbage", [b"", b"\x00" * 7, b"not compressed at all, clearly"])
def test_garbage_is_corrupt(codec: int, garbage: bytes) -> None:
    with pytest.raises(KafkaError) as raised:
        decompress(codec, garbage)
    assert raised.value.code == ErrorCode.corrupt_message


@pytest.mark.parametrize("codec", [5, 6, 7, 8, -1])
def test_unknown_codec_ids_are_unsupported(codec: int) -> None:
    for operation in (compress, decompress):
        with pytest.raises(KafkaError) as raised:
            operation(codec, b"data")
        assert raised.value.code == ErrorCode.unsupported_compression_type
