"""Append-time validation and conversion per the topic's settings (Kafka's LogValidator)."""

from __future__ import annotations

from pathlib import Path

import pytest
from batch_builder import NOW_MS, build_batch, keyed_batch
from log_testing import FakeClock, OpenLog, read_batches, read_records, region_bytes, same_batch

from odradek.broker.log import LogConfig
from odradek.broker.protocol.compression import CODEC_NAMES, GZIP, LZ4, NONE, SNAPPY, ZSTD
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.records import iter_batches

COMPACTED = LogConfig(cleanup_policy=("compact",))
CODEC_CONFIG_NAMES = {
    NONE: "uncompressed",
    GZIP: "gzip",
    SNAPPY: "snappy",
    LZ4: "lz4",
    ZSTD: "zstd",
}


def test_a_batch_above_max_message_bytes_is_refused_as_message_too_large(
    open_log: OpenLog,
) -> None:
    batch = build_batch(3)
    log = open_log(LogConfig(max_message_bytes=len(batch) - 1))

    with pytest.raises(KafkaError) as error:
        log.append_as_leader(build_batch(1) + batch, leader_epoch=0)

    assert error.value.code == ErrorCode.message_too_large
    assert log.log_end_offset == 0
    assert log.append_as_leader(build_batch(1), leader_epoch=0).first_offset == 0


def test_compacted_topic_refuses_a_batch_with_a_keyless_record(open_log: OpenLog) -> None:
    log = open_log(COMPACTED)

    with pytest.raises(KafkaError) as error:
        log.append_as_leader(keyed_batch([(b"k", b"v"), (None, b"v")], codec=GZIP), leader_epoch=0)

    assert error.value.code == ErrorCode.invalid_record
    assert log.log_end_offset == 0


def test_compacted_topic_stores_keyed_batches_unchanged(open_log: OpenLog) -> None:
    log = open_log(COMPACTED)
    sent = keyed_batch([(b"k", b"v"), (b"k", None)], codec=LZ4)

    log.append_as_leader(sent, leader_epoch=0)

    assert same_batch(region_bytes(log.read(0, 1 << 20)), sent)


@pytest.mark.parametrize("target", sorted(CODEC_CONFIG_NAMES), ids=CODEC_NAMES.get)
@pytest.mark.parametrize("source", sorted(CODEC_CONFIG_NAMES), ids=CODEC_NAMES.get)
def test_compression_type_recompresses_keeping_records_offsets_and_producer_fields(
    open_log: OpenLog, source: int, target: int
) -> None:
    log = open_log(LogConfig(compression_type=CODEC_CONFIG_NAMES[target]))
    items = [(b"k%d" % i, b"value-%d" % i * 20) for i in range(5)] + [(b"gone", None)]
    sent = keyed_batch(items, codec=source, producer_id=7, producer_epoch=2, base_sequence=0)
    log.append_as_leader(build_batch(2), leader_epoch=0)

    info = log.append_as_leader(sent, leader_epoch=3)

    (header,) = read_batches(log, 2)
    assert header.compression == target
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (7, 2, 0)
    assert (header.base_offset, header.last_offset, header.partition_leader_epoch) == (2, 7, 3)
    records = read_records(log, 2)
    assert [(r.offset, r.key, r.value) for r in records] == [
        (2 + i, key, value) for i, (key, value) in enumerate(items)
    ]
    assert [r.timestamp for r in records] == [NOW_MS + i for i in range(6)]
    assert records[0].headers == (("h", b"0"),)
    assert (info.first_offset, info.last_offset, info.log_append_time) == (2, 7, -1)
    # the producer's sequence state follows the converted batch: a retry is a duplicate
    assert log.append_as_leader(sent, leader_epoch=3).duplicate


def test_log_append_time_stamps_every_batch_with_the_append_time(
    open_log: OpenLog, clock: FakeClock
) -> None:
    log = open_log(LogConfig(message_timestamp_type="LogAppendTime"))
    clock.advance_ms(5000)
    now = NOW_MS + 5000

    info = log.append_as_leader(build_batch(2, timestamp=1) + build_batch(3), leader_epoch=0)

    assert info.log_append_time == now
    headers = list(iter_batches(region_bytes(log.read(0, 1 << 20))))  # CRCs still check
    assert [(h.is_log_append_time, h.max_timestamp) for h in headers] == [(True, now)] * 2
    assert {r.timestamp for r in read_records(log)} == {now}
    assert log.offset_for_timestamp(now) == (0, now)
    assert log.max_timestamp() == (now, 0)


def test_log_append_time_with_recompression_on_a_compacted_topic(
    open_log: OpenLog, clock: FakeClock
) -> None:
    log = open_log(
        LogConfig(
            cleanup_policy=("compact", "delete"),
            compression_type="zstd",
            message_timestamp_type="LogAppendTime",
        )
    )

    info = log.append_as_leader(keyed_batch([(b"a", b"1"), (b"b", b"2")]), leader_epoch=0)

    (header,) = read_batches(log, 0)
    assert (header.compression, header.is_log_append_time) == (ZSTD, True)
    assert header.max_timestamp == info.log_append_time == int(clock.now * 1000)
    assert [(r.key, r.value) for r in read_records(log)] == [(b"a", b"1"), (b"b", b"2")]


def test_a_create_time_record_too_far_in_the_future_is_refused_as_invalid_timestamp(
    open_log: OpenLog,
) -> None:
    log = open_log(LogConfig(timestamp_after_max_ms=60_000))
    log.append_as_leader(build_batch(2, timestamp=NOW_MS + 59_998), leader_epoch=0)

    with pytest.raises(KafkaError) as error:
        log.append_as_leader(build_batch(2, timestamp=NOW_MS + 60_000), leader_epoch=0)

    assert error.value.code == ErrorCode.invalid_timestamp
    assert "message.timestamp.after.max.ms" in error.value.message
    assert log.log_end_offset == 2


def test_a_create_time_record_too_old_is_refused_only_when_the_topic_bounds_age(
    open_log: OpenLog, tmp_path: Path
) -> None:
    old = build_batch(3, timestamp=NOW_MS - 10 * 3600 * 1000)
    assert open_log(LogConfig()).append_as_leader(old, leader_epoch=0).first_offset == 0
    log = open_log(LogConfig(timestamp_before_max_ms=3600 * 1000), tmp_path / "bounded-0")

    with pytest.raises(KafkaError) as error:
        log.append_as_leader(
            keyed_batch([(b"k", b"v")], codec=GZIP, timestamp=NOW_MS - 3600_001), leader_epoch=0
        )

    assert error.value.code == ErrorCode.invalid_timestamp
    assert log.append_as_leader(build_batch(1), leader_epoch=0).first_offset == 0


def test_log_append_time_topics_accept_any_producer_timestamp(open_log: OpenLog) -> None:
    log = open_log(LogConfig(message_timestamp_type="LogAppendTime", timestamp_after_max_ms=0))

    assert log.append_as_leader(build_batch(1, timestamp=NOW_MS + 10**9), leader_epoch=0)


@pytest.mark.parametrize(
    ("codec", "field", "fast", "small"),
    [(GZIP, "gzip_level", 1, 9), (LZ4, "lz4_level", 1, 17), (ZSTD, "zstd_level", -5, 19)],
    ids=["gzip", "lz4", "zstd"],
)
def test_compression_levels_apply_when_the_broker_recompresses(
    open_log: OpenLog, tmp_path: Path, codec: int, field: str, fast: int, small: int
) -> None:
    records = [(b"k%d" % i, b"value %d, " % (i % 13) * (i % 40)) for i in range(300)]
    sizes = {}
    for level in (fast, small):
        config = LogConfig(compression_type=CODEC_CONFIG_NAMES[codec], **{field: level})
        log = open_log(config, tmp_path / f"level{level}-0")
        log.append_as_leader(keyed_batch(records), leader_epoch=0)
        assert [(r.key, r.value) for r in read_records(log)] == records
        sizes[level] = len(region_bytes(log.read(0, 1 << 30)))

    assert sizes[small] < sizes[fast]
