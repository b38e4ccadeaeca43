"""Kafka's LogValidator: what a leader checks and converts before batches reach the log.

The common case (``compression.type=producer``, CreateTime, a non-compacted
topic) only compares batch sizes; records are decoded only when a topic's
settings require looking inside: keys on compacted topics, or a codec other
than the producer's.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..protocol.compression import GZIP, LZ4, NONE, SNAPPY, ZSTD
from ..protocol.errors import ErrorCode, KafkaError
from ..protocol.record_codec import BatchSpec, Record, decode_batch, encode_batch
from ..protocol.records import COMPRESSION_MASK, TIMESTAMP_TYPE_MASK, BatchHeader, iter_batches
from .batch_rewrite import stamp_log_append_time
from .log_config import LOG_APPEND_TIME, NEVER, LogConfig

CODEC_IDS = {"uncompressed": NONE, "gzip": GZIP, "snappy": SNAPPY, "lz4": LZ4, "zstd": ZSTD}

NO_TIMESTAMP = -1


@dataclass(frozen=True)
class ValidatedBatches:
    data: bytearray  # the batches to write, offsets not yet assigned
    headers: list[BatchHeader]  # positions relative to ``data``
    log_append_time: int  # the time stamped into the batches; -1 for CreateTime


def validate_for_append(
    data: bytearray,
    headers: list[BatchHeader],
    config: LogConfig,
    now_ms: int,
    newest_timestamp: int = NO_TIMESTAMP,
) -> ValidatedBatches:
    """Check ``headers``' batches against ``config`` and convert them as the topic requires.

    LogAppendTime is ``now_ms`` but never below ``newest_timestamp`` (the partition's
    newest so far): a clock stepped back does not make a partition's times go back.
    Raises MESSAGE_TOO_LARGE for a batch above max.message.bytes, INVALID_RECORD
    for a keyless record on a compacted topic and INVALID_TIMESTAMP for a CreateTime
    record outside message.timestamp.before.max.ms / after.max.ms of ``now_ms``.
    """
    _check_sizes(headers, config)
    target = CODEC_IDS.get(config.compression_type)  # None: keep the producer's codec
    log_append_time = (
        max(now_ms, newest_timestamp)
        if config.message_timestamp_type == LOG_APPEND_TIME
        else NO_TIMESTAMP
    )
    # The newest timestamp is in the batch header; the oldest needs the records, so they
    # are decoded for that only when a topic bounds how old records may be.
    check_oldest = log_append_time == NO_TIMESTAMP and config.timestamp_before_max_ms < NEVER
    if log_append_time == NO_TIMESTAMP:
        _check_newest_timestamps(headers, config, now_ms)
    if target is None and log_append_time == NO_TIMESTAMP and not (config.compacts or check_oldest):
        return ValidatedBatches(data, headers, NO_TIMESTAMP)
    level = {GZIP: config.gzip_level, LZ4: config.lz4_level, ZSTD: config.zstd_level}.get(
        target or NONE
    )
    converted = bytearray()
    for header in headers:
        batch = memoryview(data)[header.position : header.position + header.size]
        records = None
        if check_oldest and not header.is_control:
            _, records = decode_batch(batch)
            _check_oldest_timestamp(records, config, now_ms)
        if config.compacts and not header.is_control:
            if records is None:
                _, records = decode_batch(batch)
            if any(record.key is None for record in records):
                raise KafkaError(
                    ErrorCode.invalid_record, "compacted topics require a key per record"
                )
        if (
            target is None
            or target == header.compression
            or header.is_control
            or header.records_count == 0
        ):
            start = len(converted)
            converted += batch
            if log_append_time != NO_TIMESTAMP:
                stamp_log_append_time(converted, start, header.size, log_append_time)
            continue
        if records is None:
            _, records = decode_batch(batch)
        converted += _recompressed(header, records, target, level, log_append_time)
    converted_headers = list(iter_batches(converted))
    _check_sizes(converted_headers, config)
    return ValidatedBatches(converted, converted_headers, log_append_time)


def _recompressed(
    header: BatchHeader,
    records: list[Record],
    codec: int,
    level: int | None,
    log_append_time: int,
) -> bytes:
    """The batch re-encoded with ``codec``, keeping offsets, timestamps and producer fields."""
    attributes = header.attributes & ~COMPRESSION_MASK
    max_timestamp = header.max_timestamp
    if log_append_time != NO_TIMESTAMP:
        attributes |= TIMESTAMP_TYPE_MASK
        max_timestamp = log_append_time
    return encode_batch(
        BatchSpec.like(
            header,
            records,
            codec=codec,
            attributes=attributes,
            max_timestamp=max_timestamp,
            compression_level=level,
        )
    )


def _check_newest_timestamps(headers: list[BatchHeader], config: LogConfig, now_ms: int) -> None:
    for header in headers:
        if header.max_timestamp != NO_TIMESTAMP and (
            header.max_timestamp - now_ms > config.timestamp_after_max_ms
        ):
            raise _out_of_range(header.max_timestamp, config, now_ms)


def _check_oldest_timestamp(records: list[Record], config: LogConfig, now_ms: int) -> None:
    for record in records:
        if record.timestamp != NO_TIMESTAMP and (
            now_ms - record.timestamp > config.timestamp_before_max_ms
        ):
            raise _out_of_range(record.timestamp, config, now_ms)


def _out_of_range(timestamp: int, config: LogConfig, now_ms: int) -> KafkaError:
    return KafkaError(
        ErrorCode.invalid_timestamp,
        f"timestamp {timestamp} is out of range: it must be within "
        f"[{now_ms - config.timestamp_before_max_ms}, {now_ms + config.timestamp_after_max_ms}] "
        "(message.timestamp.before.max.ms, message.timestamp.after.max.ms)",
    )


def _check_sizes(headers: list[BatchHeader], config: LogConfig) -> None:
    for header in headers:
        if header.size > config.max_message_bytes:
            raise KafkaError(
                ErrorCode.message_too_large,
                f"batch of {header.size} bytes exceeds max.message.bytes "
                f"{config.max_message_bytes}",
            )
