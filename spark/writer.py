"""Batch and streaming writes to topics, taking the columns of Spark's Kafka sink.

Each task writes its rows with one idempotent producer and waits until every
record is acknowledged before it reports success; a failed delivery fails the
task. Like Spark's Kafka sink the guarantee is at-least-once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from confluent_kafka import KafkaError, KafkaException, Message, Producer
from pyspark.sql import Row
from pyspark.sql.datasource import DataSourceStreamWriter, DataSourceWriter, WriterCommitMessage

from odradek.spark.client_config import producer_config
from odradek.spark.options import WriteOptions

FLUSH_TIMEOUT_S = 120.0
UNASSIGNED_PARTITION = -1  # librdkafka: let the partitioner choose

DeliveryCallback = Callable[[KafkaError | None, Message], None]


@dataclass
class WrittenRecords(WriterCommitMessage):  # type: ignore[misc]
    count: int


def write_rows(rows: Iterator[Row], options: WriteOptions) -> WrittenRecords:
    """Produce every row and wait for all acknowledgements."""
    producer = Producer(producer_config(options.bootstrap_servers, options.client_settings))
    errors: list[KafkaError] = []

    def on_delivery(error: KafkaError | None, _: Message) -> None:
        if error is not None:
            errors.append(error)

    count = 0
    for row in rows:
        fields = row.asDict()
        topic = options.topic or fields.get("topic")
        if not topic:
            raise ValueError(f"row {count} has no topic (null 'topic' column, no 'topic' option)")
        _produce(producer, topic, fields, on_delivery)
        count += 1
        if errors:
            break
    remaining = producer.flush(FLUSH_TIMEOUT_S)
    if errors:
        raise KafkaException(errors[0])
    if remaining:
        raise TimeoutError(f"{remaining} records not acknowledged within {FLUSH_TIMEOUT_S:.0f} s")
    return WrittenRecords(count)


def _produce(
    producer: Producer, topic: str, fields: dict[str, Any], on_delivery: DeliveryCallback
) -> None:
    headers = fields.get("headers")
    partition = fields.get("partition")
    while True:
        try:
            producer.produce(
                topic,
                value=_bytes(fields["value"]),
                key=_bytes(fields.get("key")),
                partition=UNASSIGNED_PARTITION if partition is None else partition,
                on_delivery=on_delivery,
                headers=[(h["key"], h["value"]) for h in headers] if headers else None,
            )
            return
        except BufferError:
            producer.poll(0.1)  # local queue full: let deliveries drain


def _bytes(value: object) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, bytearray):
        return bytes(value)
    return str(value).encode()


class BatchWriter(DataSourceWriter):  # type: ignore[misc]
    def __init__(self, options: WriteOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[Row]) -> WrittenRecords:
        return write_rows(iterator, self.options)


class StreamWriter(DataSourceStreamWriter):  # type: ignore[misc]
    def __init__(self, options: WriteOptions) -> None:
        self.options = options

    def write(self, iterator: Iterator[Row]) -> WrittenRecords:
        return write_rows(iterator, self.options)

    def commit(self, messages: Sequence[WriterCommitMessage | None], batchId: int) -> None:
        """Nothing to do: tasks acknowledged their records before they reported."""

    def abort(self, messages: Sequence[WriterCommitMessage | None], batchId: int) -> None:
        """Nothing to undo: records already produced stay (at-least-once)."""
