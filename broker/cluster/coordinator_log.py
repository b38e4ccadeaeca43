"""A coordinator's records in a partition of its internal topic (``__consumer_offsets``,
``__transaction_state``): writing them and reading them back.

A write goes through the leader's normal append and returns once the high
watermark passes it, so with replication a write is acknowledged only when
a new leader would load it too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from odradek.broker.cluster.partition import Partition
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.record_codec import BatchSpec, Record, decode_batch, encode_batch
from odradek.broker.protocol.records import NO_PRODUCER_ID, TRANSACTIONAL_MASK, iter_batches
from odradek.broker.protocol.transaction_markers import TransactionMarker, decode_marker

KeyValue = tuple[bytes, bytes | None]
READ_CHUNK_BYTES = 1024 * 1024

# Kafka's translation of append errors into what coordinator clients understand
_COORDINATOR_ERRORS = {
    ErrorCode.unknown_topic_or_partition: ErrorCode.coordinator_not_available,
    ErrorCode.not_enough_replicas: ErrorCode.coordinator_not_available,
    ErrorCode.not_enough_replicas_after_append: ErrorCode.coordinator_not_available,
    ErrorCode.request_timed_out: ErrorCode.coordinator_not_available,
    ErrorCode.not_leader_or_follower: ErrorCode.not_coordinator,
    ErrorCode.kafka_storage_error: ErrorCode.not_coordinator,
    ErrorCode.message_too_large: ErrorCode.unknown_server_error,
    ErrorCode.record_list_too_large: ErrorCode.unknown_server_error,
}


async def append_records(
    partition: Partition,
    records: Sequence[KeyValue],
    min_insync: int,
    timeout_ms: int,
    clock: Callable[[], float] = time.time,
    transaction: tuple[int, int] | None = None,
) -> None:
    """Append ``records`` as one batch and wait until they are committed (high watermark).
    With ``transaction`` (producer id, epoch) the batch is that producer's, transactional:
    its records count once the transaction's COMMIT marker follows (TxnOffsetCommit). Such
    a batch carries no sequence (-1): only clients' batches are sequence-checked."""
    now_ms = int(clock() * 1000)
    producer_id, epoch = transaction or (NO_PRODUCER_ID, -1)
    batch = encode_batch(
        BatchSpec(
            attributes=TRANSACTIONAL_MASK if transaction else 0,
            producer_id=producer_id,
            producer_epoch=epoch,
            records=[Record(i, now_ms, key, value) for i, (key, value) in enumerate(records)],
        )
    )
    try:
        info = partition.append_as_leader(batch, -1, min_insync)
        await partition.wait_for_high_watermark(info.last_offset + 1, timeout_ms / 1000)
    except KafkaError as error:
        code = _COORDINATOR_ERRORS.get(error.code, error.code)
        raise KafkaError(code, f"writing to {partition.key}: {error.message}") from None


@dataclass(frozen=True)
class LoggedRecord:
    key: bytes
    value: bytes | None
    producer_id: int = NO_PRODUCER_ID
    """The producer of a transactional write (its transaction's marker decides it)."""


def read_log(partition: Partition) -> Iterator[LoggedRecord | TransactionMarker]:
    """Every keyed record and transaction marker in the partition's log, oldest first."""
    log = partition.log
    offset = log.log_start_offset
    while offset < log.log_end_offset:
        result = partition.read(offset, READ_CHUNK_BYTES, committed_only=False)
        if not result.regions:
            return
        for region in result.regions:
            data = region.read()
            view = memoryview(data)
            for header in iter_batches(data):
                offset = header.next_offset
                batch = view[header.position : header.position + header.size]
                if header.is_control:
                    marker = decode_marker(batch)
                    if marker is not None:
                        yield marker
                    continue
                producer_id = header.producer_id if header.is_transactional else NO_PRODUCER_ID
                for record in decode_batch(batch)[1]:
                    if record.key is not None:
                        yield LoggedRecord(record.key, record.value, producer_id)
