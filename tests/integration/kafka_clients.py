"""One interface over kafka-python, aiokafka and confluent-kafka, for parametrized tests.

Each ``Client`` produces a list of ``OutRecord`` to one partition (returning
the offsets the broker acknowledged, in send order), consumes with assign +
seek (no consumer group), and reads earliest/latest offsets through the
client's own ListOffsets API.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import aiokafka
import confluent_kafka
import kafka
from kafka.structs import TopicPartition as KafkaTopicPartition

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
CREATE_TIME = "CreateTime"
LOG_APPEND_TIME = "LogAppendTime"
BEGINNING = -2


@dataclass(frozen=True)
class OutRecord:
    """A record to send; ``timestamp_ms=None`` lets the producer stamp the time."""

    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...] = ()
    timestamp_ms: int | None = None


@dataclass(frozen=True)
class InRecord:
    """A record as a consumer saw it."""

    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes], ...]
    timestamp_ms: int
    timestamp_type: str


class Client:
    """The operations every client adapter offers."""

    name: ClassVar[str]

    def produce(
        self,
        bootstrap: str,
        topic: str,
        partition: int,
        records: Sequence[OutRecord],
        codec: str = "none",
        **config: Any,
    ) -> list[int]:
        raise NotImplementedError

    def consume(
        self,
        bootstrap: str,
        topic: str,
        partition: int,
        start: int,
        count: int,
        timeout: float = 20.0,
    ) -> list[InRecord]:
        """``count`` records from offset ``start`` (``BEGINNING`` for the log start)."""
        raise NotImplementedError

    def offsets(self, bootstrap: str, topic: str, partition: int) -> tuple[int, int]:
        """(earliest, latest) offsets via ListOffsets."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.name


def _headers(raw: Any) -> tuple[tuple[str, bytes], ...]:
    return tuple((key, bytes(value) if value is not None else b"") for key, value in raw or ())


class KafkaPythonClient(Client):
    name = "kafka-python"

    def produce(
        self,
        bootstrap: str,
        topic: str,
        partition: int,
        records: Sequence[OutRecord],
        codec: str = "none",
        **config: Any,
    ) -> list[int]:
        producer = kafka.KafkaProducer(
            bootstrap_servers=bootstrap,
            compression_type=None if codec == "none" else codec,
            linger_ms=20,
            request_timeout_ms=15000,
            **config,
        )
        try:
            futures = [
                producer.send(
                    topic,
                    key=record.key,
                    value=record.value,
                    headers=list(record.headers),
                    partition=partition,
                    timestamp_ms=record.timestamp_ms,
                )
                for record in records
            ]
            producer.flush(timeout=20)
            return [future.get(timeout=20).offset for future in futures]
        finally:
            producer.close(timeout=5)

    def consume(
        self,
        bootstrap: str,
        topic: str,
        partition: int,
        start: int,
        count: int,
        timeout: float = 20.0,
    ) -> list[InRecord]:
        consumer = kafka.KafkaConsumer(
            bootstrap_servers=bootstrap,
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
        )
        tp = KafkaTopicPartition(topic, partition)
        try:
            consumer.assign([tp])
            if start == BEGINNING:
                consumer.seek_to_beginning(tp)
            else:
                consumer.seek(tp, start)
            out: list[InRecord] = []
            deadline = time.monotonic() + timeout
            while len(out) < count and time.monotonic() < deadline:
                for batch in consumer.poll(timeout_ms=200).values():
                    out += [
                        InRecord(
                            offset=r.offset,
                            key=r.key,
                            value=r.value,
                            headers=_headers(r.headers),
                            timestamp_ms=r.timestamp,
                            timestamp_type=CREATE_TIME
                            if r.timestamp_type == 0
                            else LOG_APPEND_TIME,
                        )
                        for r in batch
                    ]
            return out
        finally:
            consumer.close()

    def offsets(self, bootstrap: str, topic: str, partition: int) -> tuple[int, int]:
        consumer = kafka.KafkaConsumer(bootstrap_servers=bootstrap, group_id=None)
        tp = KafkaTopicPartition(topic, partition)
        try:
            earliest = consumer.beginning_offsets([tp], timeout_ms=10000)[tp]
            latest = consumer.end_offsets([tp], timeout_ms=10000)[tp]
            return earliest, latest
        finally:
            consumer.close()


class AIOKafkaClient(Client):
    name = "aiokafka"

    def produce(
        self,
        bootstrap: str,
        topic: str,
        partition: int,
        records: Sequence[OutRecord],
        codec: str = "none",
        **config: Any,
    ) -> list[int]:
        async def run() -> list[int]:
            producer = aiokafka.AIOKafkaProducer(
                bootstrap_servers=bootstrap,
                compression_type=None if codec == "none" else codec,
                linger_ms=20,
                **config,
            )
            await producer.start()
            try:
                futures = [
                    await producer.send(
                        topic,
                        key=record.key,
                        value=record.value,
                        partition=partition,
                        timestamp_ms=record.timestamp_ms,
                        headers=list(record.headers),
                    )
                    for record in records
                ]
                results = await asyncio.wait_for(asyncio.gather(*futures), timeout=20)
                return [metadata.offset for metadata in results]
            finally:
                await producer.stop()

        return asyncio.run(run())

    def consume(
        self,
        bootstrap: str,
        topic: str,
        partition: int,
        start: int,
        count: int,
        timeout: float = 20.0,
    ) -> list[InRecord]:
        async def run() -> list[InRecord]:
            consumer = aiokafka.AIOKafkaConsumer(
                bootstrap_servers=bootstrap,
                group_id=None,
                enable_auto_commit=False,
                auto_offset_reset="earliest",
            )
            await consumer.start()
            tp = aiokafka.TopicPartition(topic, partition)
            try:
                consumer.assign([tp])
                if start == BEGINNING:
                    await consumer.seek_to_beginning(tp)
                else:
                    consumer.seek(tp, start)
                out: list[InRecord] = []
                deadline = time.monotonic() + timeout
                while len(out) < count and time.monotonic() < deadline:
                    for batch in (await consumer.getmany(timeout_ms=200)).values():
                        out += [
                            InRecord(
                                offset=r.offset,
                                key=r.key,
                                value=r.value,
                                headers=_headers(r.headers),
                                timestamp_ms=r.timestamp,
                                timestamp_type=(
                                    CREATE_TIME if r.timestamp_type == 0 else LOG_APPEND_TIME
                                ),
                            )
                            for r in batch
                        ]
                return out
            finally:
                await consumer.stop()

        return asyncio.run(run())

    def offsets(self, bootstrap: str, topic: str, partition: int) -> tuple[int, int]:
        async def run() -> tuple[int, int]:
            consumer = aiokafka.AIOKafkaConsumer(bootstrap_servers=bootstrap, group_id=None)
            await consumer.start()
            tp = aiokafka.TopicPartition(topic, partition)
            try:
                earliest = (await consumer.beginning_offsets([tp]))[tp]
                latest = (await consumer.end_offsets([tp]))[tp]
                return earliest, latest
            finally:
                await consumer.stop()

        return asyncio.run(run())


class ConfluentClient(Client):
    name = "confluent-kafka"

    def produce(
        self,
        bootstrap: str,
        topic: str,
        partition: int,
        records: Sequence[OutRecord],
        codec: str = "none",
        **config: Any,
    ) -> list[int]:
        producer = confluent_kafka.Producer(
            {
                "bootstrap.servers": bootstrap,
                "compression.type": codec,
                "linger.ms": 20,
                **config,
            }
        )
        offsets: list[int | None] = [None] * len(records)
        errors: list[str] = []

        def on_delivery(index: int) -> Any:
            def report(err: Any, msg: Any) -> None:
                if err is not None:
                    errors.append(f"record {index}: {err}")
                else:
                    offsets[index] = msg.offset()

            return report

        for index, record in enumerate(records):
            producer.produce(
                topic,
                key=record.key,
                value=record.value,
                partition=partition,
                timestamp=record.timestamp_ms or 0,
                headers=list(record.headers),
                on_delivery=on_delivery(index),
            )
            producer.poll(0)
        remaining = producer.flush(20)
        assert remaining == 0 and not errors, f"undelivered={remaining} errors={errors}"
        return [offset for offset in offsets if offset is not None]

    def consume(
        self,
        bootstrap: str,
        topic: str,
        partition: int,
        start: int,
        count: int,
        timeout: float = 20.0,
    ) -> list[InRecord]:
        consumer = confluent_kafka.Consumer(
            {
                "bootstrap.servers": bootstrap,
                # librdkafka insists on a group id, but assign() never joins the group.
                "group.id": f"unused-{uuid.uuid4().hex}",
                "enable.auto.commit": False,
                "enable.auto.offset.store": False,
                "auto.offset.reset": "earliest",
            }
        )
        try:
            consumer.assign(
                [
                    confluent_kafka.TopicPartition(
                        topic,
                        partition,
                        confluent_kafka.OFFSET_BEGINNING if start == BEGINNING else start,
                    )
                ]
            )
            out: list[InRecord] = []
            deadline = time.monotonic() + timeout
            while len(out) < count and time.monotonic() < deadline:
                for msg in consumer.consume(num_messages=count - len(out), timeout=0.2):
                    assert msg.error() is None, f"consumer error: {msg.error()}"
                    kind, timestamp = msg.timestamp()
                    offset = msg.offset()
                    assert offset is not None
                    out.append(
                        InRecord(
                            offset=offset,
                            key=msg.key(),
                            value=msg.value(),
                            headers=_headers(msg.headers()),
                            timestamp_ms=timestamp,
                            timestamp_type=(
                                CREATE_TIME
                                if kind == confluent_kafka.TIMESTAMP_CREATE_TIME
                                else LOG_APPEND_TIME
                            ),
                        )
                    )
            return out
        finally:
            consumer.close()

    def offsets(self, bootstrap: str, topic: str, partition: int) -> tuple[int, int]:
        consumer = confluent_kafka.Consumer(
            {"bootstrap.servers": bootstrap, "group.id": f"unused-{uuid.uuid4().hex}"}
        )
        try:
            earliest, latest = consumer.get_watermark_offsets(
                confluent_kafka.TopicPartition(topic, partition), timeout=10, cached=False
            )
            return earliest, latest
        finally:
            consumer.close()


CLIENTS: tuple[Client, ...] = (KafkaPythonClient(), AIOKafkaClient(), ConfluentClient())
