"""Executor side: read exactly the records ``[start, end)`` of one topic-partition.

Like Spark's Kafka source, the executor assigns itself the partition and seeks;
it never joins a group or commits. Offsets missing inside the range are normal
(compaction, transaction markers); offsets below the log start offset are data
loss, handled per ``failOnDataLoss``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import pyarrow as pa
from confluent_kafka import Consumer, KafkaError, KafkaException, Message
from confluent_kafka import TopicPartition as KafkaTopicPartition

from odradek.spark import data_loss
from odradek.spark.client_config import consumer_config
from odradek.spark.offsets import TopicPartition
from odradek.spark.range_planning import OffsetRange
from odradek.spark.record_schema import RecordBatchBuilder

ARROW_BATCH_ROWS = 10_000  # Spark's default spark.sql.execution.arrow.maxRecordsPerBatch
CONSUME_BATCH = 2_000
CONSUME_TIMEOUT_S = 0.5
_OUT_OF_RANGE = (KafkaError._AUTO_OFFSET_RESET, KafkaError.OFFSET_OUT_OF_RANGE)


@dataclass(frozen=True)
class ReaderSettings:
    """What an executor needs to read a range (pickled with the reader)."""

    bootstrap_servers: str
    client_settings: Mapping[str, str]
    include_headers: bool
    fail_on_data_loss: bool
    poll_timeout_ms: int


def read_range(r: OffsetRange, settings: ReaderSettings) -> Iterator[pa.RecordBatch]:
    """Arrow batches of the records of ``r``, in offset order."""
    consumer = Consumer(consumer_config(settings.bootstrap_servers, settings.client_settings))
    try:
        yield from _RangeRead(consumer, r, settings).batches()
    finally:
        consumer.close()


class _RangeRead:
    def __init__(self, consumer: Consumer, r: OffsetRange, settings: ReaderSettings) -> None:
        self.consumer = consumer
        self.range = r
        self.settings = settings
        self.tp = TopicPartition(r.topic, r.partition)
        self.next_offset = r.start
        self.builder = RecordBatchBuilder(r.topic, r.partition, settings.include_headers)

    def batches(self) -> Iterator[pa.RecordBatch]:
        self._assign(self.next_offset)
        deadline = self._deadline()
        while self.next_offset < self.range.end:
            messages = self.consumer.consume(CONSUME_BATCH, CONSUME_TIMEOUT_S)
            if not messages and time.monotonic() > deadline:
                raise TimeoutError(
                    f"{self.tp}: no records for {self.settings.poll_timeout_ms} ms while reading "
                    f"offsets {self.next_offset} to {self.range.end - 1} "
                    "(option kafkaConsumer.pollTimeoutMs)"
                )
            for message in messages:
                self._take(message)
                if self.next_offset >= self.range.end:
                    break
            if messages:
                deadline = self._deadline()
            if len(self.builder) >= ARROW_BATCH_ROWS:
                yield self.builder.flush()
        if len(self.builder):
            yield self.builder.flush()

    def _deadline(self) -> float:
        return time.monotonic() + self.settings.poll_timeout_ms / 1000

    def _assign(self, offset: int) -> None:
        self.consumer.assign([KafkaTopicPartition(self.tp.topic, self.tp.partition, offset)])

    def _take(self, message: Message) -> None:
        error = message.error()
        if error is not None:
            self._on_error(error)
            return
        offset = message.offset()
        if offset is None or offset < self.next_offset or offset >= self.range.end:
            return
        if offset > self.next_offset:
            self._check_gap(offset)
        timestamp_type, timestamp_ms = message.timestamp()
        self.builder.add(
            message.key(),
            message.value(),
            offset,
            timestamp_type,
            timestamp_ms,
            message.headers() if self.settings.include_headers else None,  # type: ignore[arg-type]
        )
        self.next_offset = offset + 1

    def _on_error(self, error: KafkaError) -> None:
        if error.code() == KafkaError._PARTITION_EOF:
            # The log ends before the planned end: the partition lost records.
            low, high = self._watermarks()
            if high < self.range.end:
                data_loss.report(
                    f"{self.tp}: offsets {max(high, self.next_offset)} to {self.range.end - 1} "
                    "no longer exist.",
                    self.settings.fail_on_data_loss,
                )
                self.next_offset = self.range.end
            return
        if error.code() in _OUT_OF_RANGE:
            low, _ = self._watermarks()
            if low > self.next_offset:
                self._lost_up_to(low)
                if self.next_offset < self.range.end:
                    self._assign(self.next_offset)
                return
        raise KafkaException(error)

    def _check_gap(self, offset: int) -> None:
        low, _ = self._watermarks()
        if low > self.next_offset:
            self._lost_up_to(min(low, offset))

    def _lost_up_to(self, first_available: int) -> None:
        end = min(first_available, self.range.end)
        data_loss.report(
            f"{self.tp}: offsets {self.next_offset} to {end - 1} were deleted before they "
            "were read.",
            self.settings.fail_on_data_loss,
        )
        self.next_offset = end

    def _watermarks(self) -> tuple[int, int]:
        kafka_tp = KafkaTopicPartition(self.tp.topic, self.tp.partition)
        low, high = self.consumer.get_watermark_offsets(kafka_tp, timeout=30.0, cached=False)
        return int(low), int(high)
