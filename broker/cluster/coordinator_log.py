"""A coordinator's records in a partition of its internal topic (``__consumer_offsets``,
``__transaction_state``): writing them and reading them back.

A write goes through the leader's normal append and returns once the high
watermark passes it, so with replication a write is acknowledged only when
a new leader would load it too.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor
from typing import NamedTuple, TypeAlias

from odradek.broker.cluster.partition import Partition, PartitionKey
from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.protocol.record_codec import BatchSpec, Record, decode_batch, encode_batch
from odradek.broker.protocol.record_fields import RecordFormatError
from odradek.broker.protocol.records import (
    NO_PRODUCER_ID,
    TRANSACTIONAL_MASK,
    BatchHeader,
    iter_batches,
)
from odradek.broker.protocol.transaction_markers import TransactionMarker, decode_marker

KeyValue = tuple[bytes, bytes | None]
READ_CHUNK_BYTES = 1024 * 1024

log = logging.getLogger(__name__)

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


class LoggedRecord(NamedTuple):
    key: bytes
    value: bytes | None
    producer_id: int = NO_PRODUCER_ID
    """The producer of a transactional write (its transaction's marker decides it)."""


LoggedItem: TypeAlias = LoggedRecord | TransactionMarker
# load(partition key, the partition's records) reads a coordinator's state and returns what
# installs it
LoadState = Callable[[PartitionKey, Iterable[LoggedItem]], Callable[[], None]]


async def load_state(partition: Partition, load: LoadState, loader: Executor) -> Callable[[], None]:
    """Run ``load`` over the partition's records on ``loader``'s thread, so that a long log
    does not stall the event loop (its clients, and the broker's etcd session, wait on it);
    the log itself is read on the loop, a chunk at a time. Returns what installs the state:
    call it before awaiting anything, as the state it installs is that of the whole log now.
    A log appended to while it was read (a transaction marker) is read again; an empty one
    is loaded at once."""
    if partition.log_start_offset >= partition.log_end_offset:
        return load(partition.key, ())
    loop = asyncio.get_running_loop()
    while True:
        reader = _LogReader(partition, loop)
        install = await loop.run_in_executor(loader, load, partition.key, reader)
        if reader.end == partition.log_end_offset:
            return install
        log.info("%s was appended to while it was loaded; loading it again", partition.key)


class _LogReader:
    """Every keyed record and transaction marker in a partition's log, oldest first, for a
    worker thread: each chunk is read on ``loop`` (where the log is written) and decoded in
    the worker. ``end`` is the log end offset the reading ended at."""

    def __init__(self, partition: Partition, loop: asyncio.AbstractEventLoop) -> None:
        self._partition = partition
        self._loop = loop
        self.end = -1

    def __iter__(self) -> Iterator[LoggedItem]:
        offset = 0
        while chunks := asyncio.run_coroutine_threadsafe(self._chunk(offset), self._loop).result():
            read_from = offset
            for data in chunks:
                view = memoryview(data)
                for header in iter_batches(data):
                    offset = header.next_offset
                    batch = view[header.position : header.position + header.size]
                    yield from _logged_items(header, batch)
            if offset == read_from:
                raise RecordFormatError(f"{self._partition.key}: no whole batch at {offset}")

    async def _chunk(self, offset: int) -> list[bytes]:
        """Up to READ_CHUNK_BYTES of whole batches from ``offset`` (or the log start, if
        later); none at the log end."""
        log_end = self._partition.log_end_offset
        offset = max(offset, self._partition.log_start_offset)
        if offset >= log_end:
            self.end = log_end
            return []
        result = self._partition.read(offset, READ_CHUNK_BYTES, committed_only=False)
        return [region.read() for region in result.regions]


def _logged_items(header: BatchHeader, batch: memoryview) -> Iterator[LoggedItem]:
    if header.is_control:
        marker = decode_marker(batch)
        if marker is not None:
            yield marker
        return
    producer_id = header.producer_id if header.is_transactional else NO_PRODUCER_ID
    for record in decode_batch(batch, header)[1]:
        if record.key is not None:
            yield LoggedRecord(record.key, record.value, producer_id)
