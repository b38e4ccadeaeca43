"""A coordinator's records in a partition of its internal topic (``__consumer_offsets``,
``__transaction_state``): writing them and reading them back.

A write goes through the leader's normal append and returns once the high
watermark passes it, so with replication a write is acknowledged only when
a new leader would load it too.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence

from odradek.broker.cluster.partition import Partition
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.record_codec import BatchSpec, Record, decode_batch, encode_batch
from odradek.broker.protocol.records import iter_batches

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
) -> None:
    """Append ``records`` as one batch and wait until they are committed (high watermark)."""
    now_ms = int(clock() * 1000)
    batch = encode_batch(
        BatchSpec(records=[Record(i, now_ms, key, value) for i, (key, value) in enumerate(records)])
    )
    try:
        info = partition.append_as_leader(batch, -1, min_insync)
        await partition.wait_for_high_watermark(info.last_offset + 1, timeout_ms / 1000)
    except KafkaError as error:
        code = _COORDINATOR_ERRORS.get(error.code, error.code)
        raise KafkaError(code, f"writing to {partition.key}: {error.message}") from None


def read_records(partition: Partition) -> Iterator[KeyValue]:
    """Every (key, value) in the partition's log, oldest first."""
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
                if header.is_control:
                    continue
                batch = view[header.position : header.position + header.size]
                for record in decode_batch(batch)[1]:
                    if record.key is not None:
                        yield record.key, record.value
