"""The target side: draining the record queue into the target (acks=all), at least
once or exactly once (``delivery``).

Each source record is produced with its key, value, headers and timestamp,
plus a provenance header, to the same partition when the partition counts
match (else the key decides, with Kafka's murmur2). A delivery report feeds
the offset translation and the metrics, and marks the source offset
acknowledged (exactly once: the commit of its transaction does); a failed
delivery or transaction (after the producer's own retries) stops the mirror,
since nothing past it may be committed.
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any, cast

from confluent_kafka import TIMESTAMP_NOT_AVAILABLE, KafkaError, KafkaException, Message

from .ack_tracker import AckTracker, Partition
from .delivery import POLL_S, Delivery, produce
from .metrics import MirrorMetrics, TopicMetrics
from .offset_translation import OffsetMaps
from .provenance import Headers, Provenance, originates_from
from .record_queue import RecordQueue
from .topic_sync import MirroredTopic

log = logging.getLogger(__name__)


class TargetWriter:
    """Runs in its own thread; ``failure`` is set (a sentence) when mirroring must stop."""

    def __init__(
        self,
        delivery: Delivery,
        source_alias: str,
        target_alias: str,
        queue: RecordQueue[Message],
        tracker: AckTracker,
        offsets: OffsetMaps,
        metrics: MirrorMetrics,
    ) -> None:
        self.delivery = delivery
        self.source_alias = source_alias
        self.target_alias = target_alias
        self.queue = queue
        self.tracker = tracker
        self.offsets = offsets
        self.metrics = metrics
        self.routes: Mapping[str, MirroredTopic] = {}
        """Source topic -> mirror; replaced whole by the rescan, read per record here."""
        self.failure: str | None = None
        self.acknowledged = 0
        self._topic_metrics: dict[str, TopicMetrics] = {}
        """Records the target acknowledged since the start."""
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="mirror-writer", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def settled(self) -> bool:
        """Nothing queued, in hand or awaiting acknowledgement; or failed (nothing will be)."""
        if self.failure is not None:
            return True
        return self.queue.unfinished() == 0 and self.tracker.pending() == 0

    def stop(self, timeout: float) -> None:
        """Finish what is queued, wait for acknowledgements, then stop."""
        self.stopping.set()
        self.thread.join(timeout)

    def _run(self) -> None:
        while self.failure is None and not (
            self.stopping.is_set() and self.queue.unfinished() == 0
        ):
            batch = self.queue.get(POLL_S)
            if batch:
                try:
                    for message in batch:
                        self._send(message)
                    self._complete(batch)
                except KafkaException as error:
                    self.metrics.errors.labels("produce").inc()
                    self._fail(f"a transaction on the target failed: {error.args[0].str()}")
                self.queue.done(len(batch))
            self.delivery.poll(0)
            self.metrics.queue.set(len(self.queue))
        self.delivery.flush(30)

    def _complete(self, batch: Sequence[Message]) -> None:
        """The batch is produced: let the delivery finish it (exactly once: commit each
        partition's transaction), then, if it waits for that, count its records copied."""
        offsets: dict[Partition, list[int]] = {}
        for message in batch:
            source = (str(message.topic()), int(message.partition()))  # type: ignore[arg-type]
            offsets.setdefault(source, []).append(int(message.offset()))  # type: ignore[arg-type]
        self.delivery.complete({source: max(found) + 1 for source, found in offsets.items()})
        if not self.delivery.acknowledges_on_delivery:
            for source, found in offsets.items():
                for offset in found:
                    self.tracker.acknowledged(source, offset)

    def _send(self, message: Message) -> None:
        topic = str(message.topic())
        partition = int(message.partition())  # type: ignore[arg-type]
        offset = int(message.offset())  # type: ignore[arg-type]
        key = (topic, partition)
        self.tracker.dispatched(key, offset)
        headers = cast(Headers | None, message.headers())
        if originates_from(headers, self.target_alias):
            self.tracker.acknowledged(key, offset)
            self.metrics.skipped.labels(topic).inc()
            return
        route = self.routes.get(topic)
        if route is None:
            self._fail(f"no target topic is known for source topic {topic}")
            return
        provenance = Provenance(self.source_alias, topic, partition, offset).header()
        kind, timestamp = message.timestamp()
        options: dict[str, Any] = {"headers": [*(headers or ()), provenance]}
        if kind != TIMESTAMP_NOT_AVAILABLE:
            options["timestamp"] = timestamp
        if route.preserves_partitions:
            options["partition"] = partition
        producer = self.delivery.producer_for(key)
        if producer is None:  # lost to another process, which copies it
            self.tracker.acknowledged(key, offset)
            return
        value, record_key = message.value(), message.key()
        size = len(value or b"") + len(record_key or b"")
        report = functools.partial(
            self._delivered, key, offset, timestamp, size, route.preserves_partitions
        )
        produce(producer, route.target_topic, value, record_key, on_delivery=report, **options)

    def _delivered(
        self,
        source: tuple[str, int],
        offset: int,
        timestamp: int,
        size: int,
        track_offsets: bool,
        error: KafkaError | None,
        message: Message,
    ) -> None:
        topic = source[0]
        if error is not None:
            self.metrics.errors.labels("produce").inc()
            self._fail(f"the target refused record {topic}/{source[1]}@{offset}: {error.str()}")
            return
        if self.delivery.acknowledges_on_delivery:
            self.tracker.acknowledged(source, offset)
        self.acknowledged += 1
        if track_offsets:
            self.offsets.record(source, offset, int(message.offset()))  # type: ignore[arg-type]
        per_topic = self._topic_metrics.get(topic)
        if per_topic is None:
            per_topic = self._topic_metrics[topic] = self.metrics.topic(topic)
        per_topic.mirrored(size, timestamp)

    def _fail(self, reason: str) -> None:
        if self.failure is None:
            self.failure = reason
            log.error("Mirroring stops: %s.", reason)
