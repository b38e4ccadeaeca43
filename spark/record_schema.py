"""The rows the source produces: Spark's Kafka source schema, built as Arrow batches.

Arrow batches skip Spark's per-row Python-to-JVM conversion. Column types must
match what Spark expects for the declared schema exactly (microsecond UTC
timestamps, list items named ``element``).
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

COLUMNS = (
    "key binary, value binary, topic string, partition int, offset long, "
    "timestamp timestamp, timestampType int"
)
HEADERS_COLUMN = "headers array<struct<key: string, value: binary>>"

# Kafka's TimestampType ids (Spark's timestampType column) by librdkafka's codes.
TIMESTAMP_TYPE_BY_LIBRDKAFKA = {0: -1, 1: 0, 2: 1}

_HEADER = pa.struct([("key", pa.string()), ("value", pa.binary())])
_FIELDS = [
    pa.field("key", pa.binary()),
    pa.field("value", pa.binary()),
    pa.field("topic", pa.string()),
    pa.field("partition", pa.int32()),
    pa.field("offset", pa.int64()),
    pa.field("timestamp", pa.timestamp("us", tz="UTC")),
    pa.field("timestampType", pa.int32()),
]
_HEADERS_FIELD = pa.field("headers", pa.list_(pa.field("element", _HEADER)))

Header = tuple[str, bytes | None]


def ddl_schema(include_headers: bool) -> str:
    """The source's schema as a Spark DDL string."""
    return f"{COLUMNS}, {HEADERS_COLUMN}" if include_headers else COLUMNS


class RecordBatchBuilder:
    """Collects one partition's records column by column and emits Arrow batches."""

    def __init__(self, topic: str, partition: int, include_headers: bool) -> None:
        self._topic = topic
        self._partition = partition
        self._include_headers = include_headers
        self._schema = pa.schema([*_FIELDS, _HEADERS_FIELD] if include_headers else _FIELDS)
        self._clear()

    def _clear(self) -> None:
        self.keys: list[bytes | None] = []
        self.values: list[bytes | None] = []
        self.offsets: list[int] = []
        self.timestamps_us: list[int | None] = []
        self.timestamp_types: list[int] = []
        self.headers: list[Sequence[Header] | None] = []

    def __len__(self) -> int:
        return len(self.offsets)

    def add(
        self,
        key: bytes | None,
        value: bytes | None,
        offset: int,
        timestamp_type: int,
        timestamp_ms: int,
        headers: Sequence[Header] | None,
    ) -> None:
        """One record; ``timestamp_type`` in librdkafka's codes."""
        self.keys.append(key)
        self.values.append(value)
        self.offsets.append(offset)
        self.timestamps_us.append(timestamp_ms * 1000 if timestamp_type else None)
        self.timestamp_types.append(TIMESTAMP_TYPE_BY_LIBRDKAFKA.get(timestamp_type, -1))
        if self._include_headers:
            self.headers.append(headers or None)

    def flush(self) -> pa.RecordBatch:
        """The records added since the last flush, as one batch."""
        n = len(self.offsets)
        columns = [
            pa.array(self.keys, pa.binary()),
            pa.array(self.values, pa.binary()),
            pa.array([self._topic] * n, pa.string()),
            pa.array([self._partition] * n, pa.int32()),
            pa.array(self.offsets, pa.int64()),
            pa.array(self.timestamps_us, pa.timestamp("us", tz="UTC")),
            pa.array(self.timestamp_types, pa.int32()),
        ]
        if self._include_headers:
            columns.append(pa.array(self.headers, _HEADERS_FIELD.type))
        self._clear()
        return pa.RecordBatch.from_arrays(columns, schema=self._schema)
