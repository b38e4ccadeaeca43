"""The records of ``__transaction_state``, in Kafka's format (``TransactionLogKey`` and
``TransactionLogValue`` version 0), so its partitions read like a Kafka broker's.

Key: ``version i16 = 0, transactional_id string``. Value: ``version i16 = 0, producer_id
i64, producer_epoch i16, transaction_timeout_ms i32, transaction_status i8,
transaction_partitions [topic string, partition_ids [i32]] (null when Empty),
last_update_timestamp_ms i64, start_timestamp_ms i64``. A null value (tombstone) removes an
expired transactional id.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from odradek.broker.protocol.record_fields import FieldReader, FieldWriter, RecordFormatError

KEY_VERSION = 0
VALUE_VERSION = 0


class TransactionState(enum.IntEnum):
    """Kafka's states and their ids in the log."""

    EMPTY = 0
    ONGOING = 1
    PREPARE_COMMIT = 2
    PREPARE_ABORT = 3
    COMPLETE_COMMIT = 4
    COMPLETE_ABORT = 5
    DEAD = 6
    PREPARE_EPOCH_FENCE = 7

    @property
    def kafka_name(self) -> str:
        """As DescribeTransactions, ListTransactions and kafka-transactions name it."""
        return "".join(word.capitalize() for word in self.name.split("_"))


@dataclass(frozen=True)
class StoredTransaction:
    """One transactional id's state as the coordinator writes it."""

    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state: TransactionState
    partitions: Mapping[str, frozenset[int]]
    last_update_ms: int
    start_ms: int


def encode_key(transactional_id: str) -> bytes:
    return FieldWriter().i16(KEY_VERSION).string(transactional_id).done()


def decode_key(data: bytes) -> str:
    reader = FieldReader(data)
    version = reader.i16()
    if version != KEY_VERSION:
        raise RecordFormatError(f"transaction log key version {version} is unknown")
    transactional_id = reader.text()
    reader.end()
    return transactional_id


def encode_value(value: StoredTransaction) -> bytes:
    out = FieldWriter().i16(VALUE_VERSION).i64(value.producer_id).i16(value.producer_epoch)
    out.i32(value.timeout_ms).i8(value.state)
    if value.state is TransactionState.EMPTY:
        out.i32(-1)
    else:
        out.i32(len(value.partitions))
        for topic, partitions in sorted(value.partitions.items()):
            out.string(topic).i32(len(partitions))
            for partition in sorted(partitions):
                out.i32(partition)
    return out.i64(value.last_update_ms).i64(value.start_ms).done()


def decode_value(data: bytes) -> StoredTransaction:
    reader = FieldReader(data)
    reader.version(VALUE_VERSION)
    producer_id, producer_epoch, timeout_ms = reader.i64(), reader.i16(), reader.i32()
    try:
        state = TransactionState(reader.i8())
    except ValueError as error:
        raise RecordFormatError(f"transaction log value: {error}") from None
    count = reader.nullable_count()
    partitions = {}
    for _ in range(count or 0):
        topic = reader.text()
        partitions[topic] = frozenset(reader.i32() for _ in range(reader.count()))
    value = StoredTransaction(
        producer_id, producer_epoch, timeout_ms, state, partitions, reader.i64(), reader.i64()
    )
    reader.end()
    return value
