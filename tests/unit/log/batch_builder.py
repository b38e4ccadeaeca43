"""Real v2 record batches, encoded by kafka-python's producer-side builder or record_codec."""

from __future__ import annotations

from kafka.record.default_records import DefaultRecordBatchBuilder

from odradek.broker.protocol.record_codec import BatchSpec, Record, encode_batch

NO_PRODUCER = -1
NOW_MS = 1_700_000_000_000  # the tests' fake "now"; batches default to it


def build_batch(
    count: int = 1,
    *,
    timestamp: int = NOW_MS,
    value: bytes = b"value",
    producer_id: int = NO_PRODUCER,
    producer_epoch: int = NO_PRODUCER,
    base_sequence: int = NO_PRODUCER,
    compression: int = DefaultRecordBatchBuilder.CODEC_NONE,
) -> bytes:
    """A batch of ``count`` records; record i has timestamp ``timestamp + i``."""
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=compression,
        is_transactional=False,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        batch_size=1 << 30,
    )
    for i in range(count):
        builder.append(i, timestamp=timestamp + i, key=b"key-%d" % i, value=value, headers=[])
    return bytes(builder.build())


KeyValue = tuple[bytes | None, bytes | None]


def keyed_batch(
    items: list[KeyValue],
    *,
    codec: int = 0,
    timestamp: int = NOW_MS,
    producer_id: int = NO_PRODUCER,
    producer_epoch: int = NO_PRODUCER,
    base_sequence: int = NO_PRODUCER,
    attributes: int = 0,
) -> bytes:
    """A batch of (key, value) records (None value: a tombstone); record i at ``timestamp + i``."""
    records = [
        Record(i, timestamp + i, key, value, (("h", b"%d" % i),))
        for i, (key, value) in enumerate(items)
    ]
    return encode_batch(
        BatchSpec(
            codec=codec,
            attributes=attributes,
            producer_id=producer_id,
            producer_epoch=producer_epoch,
            base_sequence=base_sequence,
            records=records,
        )
    )
