"""The records of ``__transaction_state``, in Kafka's format (``TransactionLogKey`` version 0,
``TransactionLogValue`` version 1 as a Kafka 4 broker with transaction version 2 writes it;
version 0 is read too), so its partitions read like a Kafka broker's.

Key: ``version i16 = 0, transactional_id string``. Value: ``version i16, producer_id i64,
producer_epoch i16, transaction_timeout_ms i32, transaction_status i8,
transaction_partitions [topic string, partition_ids [i32]] (null when Empty),
last_update_timestamp_ms i64, start_timestamp_ms i64``; version 1 is flexible (compact
strings and arrays, tagged fields) and tags PreviousProducerId (0), NextProducerId (1),
ClientTransactionVersion (2) and NextProducerEpoch (3), each written only when not its
default. A null value (tombstone) removes an expired transactional id.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Mapping
from dataclasses import dataclass

from odradek.broker.protocol.record_fields import FieldReader, FieldWriter, RecordFormatError

KEY_VERSION = 0
VALUE_VERSION = 1
NO_PRODUCER_ID = -1
_PREVIOUS_PRODUCER_ID, _NEXT_PRODUCER_ID, _CLIENT_VERSION, _NEXT_PRODUCER_EPOCH = 0, 1, 2, 3
_I16 = struct.Struct(">h")
_I64 = struct.Struct(">q")


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
    previous_producer_id: int = NO_PRODUCER_ID
    """The producer id before the last transition (transaction version 2)."""
    next_producer_id: int = NO_PRODUCER_ID
    """The producer id a completing transaction hands over to, its epoch exhausted."""
    next_producer_epoch: int = -1
    client_version: int = 0
    """The transaction version the producer's requests speak (2: an epoch per transaction)."""


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
        out.compact_count(None)
    else:
        out.compact_count(len(value.partitions))
        for topic, partitions in sorted(value.partitions.items()):
            out.compact_string(topic).compact_count(len(partitions))
            for partition in sorted(partitions):
                out.i32(partition)
            out.tagged({})
    out.i64(value.last_update_ms).i64(value.start_ms)
    tagged = {}  # Kafka writes a tagged field only when it is not its default
    if value.previous_producer_id != NO_PRODUCER_ID:
        tagged[_PREVIOUS_PRODUCER_ID] = _I64.pack(value.previous_producer_id)
    if value.next_producer_id != NO_PRODUCER_ID:
        tagged[_NEXT_PRODUCER_ID] = _I64.pack(value.next_producer_id)
    if value.client_version != 0:
        tagged[_CLIENT_VERSION] = _I16.pack(value.client_version)
    if value.next_producer_epoch != -1:
        tagged[_NEXT_PRODUCER_EPOCH] = _I16.pack(value.next_producer_epoch)
    return out.tagged(tagged).done()


def decode_value(data: bytes) -> StoredTransaction:
    reader = FieldReader(data)
    flexible = reader.version(VALUE_VERSION) >= 1
    producer_id, producer_epoch, timeout_ms = reader.i64(), reader.i16(), reader.i32()
    try:
        state = TransactionState(reader.i8())
    except ValueError as error:
        raise RecordFormatError(f"transaction log value: {error}") from None
    count = reader.compact_nullable_count() if flexible else reader.nullable_count()
    partitions = {}
    for _ in range(count or 0):
        topic = reader.compact_text() if flexible else reader.text()
        size = (reader.compact_nullable_count() or 0) if flexible else reader.count()
        partitions[topic] = frozenset(reader.i32() for _ in range(size))
        if flexible:
            reader.tagged()
    last_update_ms, start_ms = reader.i64(), reader.i64()
    tagged = reader.tagged() if flexible else {}
    reader.end()
    return StoredTransaction(
        producer_id,
        producer_epoch,
        timeout_ms,
        state,
        partitions,
        last_update_ms,
        start_ms,
        _tagged_int(tagged, _PREVIOUS_PRODUCER_ID, _I64, NO_PRODUCER_ID),
        _tagged_int(tagged, _NEXT_PRODUCER_ID, _I64, NO_PRODUCER_ID),
        _tagged_int(tagged, _NEXT_PRODUCER_EPOCH, _I16, -1),
        _tagged_int(tagged, _CLIENT_VERSION, _I16, 0),
    )


def _tagged_int(tagged: Mapping[int, bytes], tag: int, layout: struct.Struct, default: int) -> int:
    if tag not in tagged:
        return default
    if len(tagged[tag]) != layout.size:
        raise RecordFormatError(f"transaction log value: tagged field {tag} has a bad size")
    value: int = layout.unpack(tagged[tag])[0]
    return value
