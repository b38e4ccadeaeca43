"""Batches for the Partition tests."""

from __future__ import annotations

from kafka.record.default_records import DefaultRecordBatchBuilder


def one_record_batch() -> bytes:
    """A v2 batch of one record, as a producer without idempotence sends it."""
    builder = DefaultRecordBatchBuilder(2, 0, False, -1, -1, -1, batch_size=1 << 20)
    builder.append(0, timestamp=1_700_000_000_000, key=None, value=b"x", headers=[])
    return bytes(builder.build())
