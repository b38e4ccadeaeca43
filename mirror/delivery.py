"""How the target writer's records reach the target: at least once, or exactly once.

``AtLeastOnce`` (the default): one idempotent producer; a record counts as copied
when the target acknowledges it, and source offsets are committed up to there.

``ExactlyOnce`` (``exactlyOnce: true``, as MirrorMaker 2's exactly-once source,
KIP-618): a transactional producer per source partition, with the transactional
id ``odradek-mirror.<name>/<topic>/<partition>``. Each batch the writer takes is
one transaction per partition, which also writes the partition's next source
offset to ``<source>.mirror-offsets.internal`` on the target. A process taking a
partition over initialises its producer first, which fences the process that had
it (a paused or partitioned one: its transactions can no longer commit) and
aborts that process's open transaction; then it resumes from the offset the
committed transactions stored. Records count as copied when their transaction
commits, so the source group's offsets never run ahead of the target.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from confluent_kafka import Producer

from .ack_tracker import Partition
from .constants import TRANSACTIONAL_ID
from .internal_topics import mirror_offset_record, read_mirror_offsets

POLL_S = 0.05
TRANSACTION_TIMEOUT_S = 60.0
TRANSACTION_TIMEOUT_MS = int(TRANSACTION_TIMEOUT_S * 1000)


def produce(producer: Producer, topic: str, value: Any, key: Any, **options: Any) -> None:
    """Produce, waiting while the producer's own queue is full (for acknowledgements)."""
    while True:
        try:
            producer.produce(topic, value, key, **options)
            return
        except BufferError:
            producer.poll(POLL_S)


class Delivery(Protocol):
    acknowledges_on_delivery: bool
    """True: a record is copied once the target acknowledges it; False: once ``complete``
    returns."""

    def producer_for(self, source: Partition) -> Producer | None:
        """The producer for a record of ``source``; None if this process no longer owns it."""

    def complete(self, progress: Mapping[Partition, int]) -> None:
        """A batch is produced; ``progress``: each partition's next source offset."""

    def poll(self, timeout: float) -> None: ...

    def flush(self, timeout: float) -> None: ...


class AtLeastOnce:
    acknowledges_on_delivery = True

    def __init__(self, producer_config: Mapping[str, Any]) -> None:
        self.producer = Producer(dict(producer_config))

    def producer_for(self, source: Partition) -> Producer:
        return self.producer

    def complete(self, progress: Mapping[Partition, int]) -> None:
        return None

    def poll(self, timeout: float) -> None:
        self.producer.poll(timeout)

    def flush(self, timeout: float) -> None:
        self.producer.flush(timeout)


class ExactlyOnce:
    acknowledges_on_delivery = False

    def __init__(
        self,
        producer_config: Mapping[str, Any],
        target_config: Mapping[str, Any],
        group_id: str,
        mirror: str,
        offsets_topic: str,
    ) -> None:
        self._producer_config = dict(producer_config)
        self._target_config = dict(target_config)
        self._group_id = group_id
        self._mirror = mirror
        self._offsets_topic = offsets_topic
        self._lock = threading.Lock()
        self._producers: dict[Partition, Producer] = {}
        self._open: set[Partition] = set()  # partitions with a transaction begun

    def take_over(self, partitions: Sequence[Partition]) -> dict[Partition, int]:
        """On assignment: each partition's producer, initialised (fencing the process that
        had it); then where to resume each, as the committed transactions stored it (the
        partitions never copied exactly once are absent). Raises KafkaException."""
        for topic, index in partitions:
            transactional_id = TRANSACTIONAL_ID.format(
                group=self._group_id, topic=topic, partition=index
            )
            producer = Producer(
                {
                    **self._producer_config,
                    "transactional.id": transactional_id,
                    # a record's delivery must not outlast its transaction (librdkafka checks)
                    "transaction.timeout.ms": TRANSACTION_TIMEOUT_MS,
                    "message.timeout.ms": TRANSACTION_TIMEOUT_MS,
                }
            )
            producer.init_transactions(TRANSACTION_TIMEOUT_S)
            with self._lock:
                self._producers[(topic, index)] = producer
        stored = read_mirror_offsets(self._target_config, self._offsets_topic, self._mirror)
        return {partition: stored[partition] for partition in partitions if partition in stored}

    def release(self, partitions: Iterable[Partition]) -> None:
        """Partitions handed over or lost: their producers go (their open transactions
        abort, when the next owner fences them, if not before)."""
        with self._lock:
            for partition in partitions:
                self._producers.pop(partition, None)
                self._open.discard(partition)

    def producer_for(self, source: Partition) -> Producer | None:
        with self._lock:
            producer = self._producers.get(source)
        if producer is not None and source not in self._open:
            producer.begin_transaction()
            self._open.add(source)
        return producer

    def complete(self, progress: Mapping[Partition, int]) -> None:
        """Each partition's transaction: its next source offset, then the commit."""
        for source, next_offset in progress.items():
            producer = self.producer_for(source)
            if producer is None:
                continue  # taken over meanwhile: the next owner copies it
            key, value = mirror_offset_record(self._mirror, source, next_offset)
            produce(producer, self._offsets_topic, value, key, partition=0)
            producer.commit_transaction(TRANSACTION_TIMEOUT_S)
            self._open.discard(source)

    def poll(self, timeout: float) -> None:
        with self._lock:
            producers = list(self._producers.values())
        for producer in producers:
            producer.poll(0)
        if timeout > 0:
            time.sleep(timeout)

    def flush(self, timeout: float) -> None:
        with self._lock:
            producers = list(self._producers.values())
        for producer in producers:
            producer.flush(timeout)
