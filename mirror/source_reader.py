"""The source side: a consumer in the mirror's group feeding the record queue.

Processes running the same config join the same group, so the source
partitions are shared among them. Offsets are committed from the ack tracker
(only what the target acknowledged), every commit interval, when partitions
are revoked (after the writer drained) and at shutdown. Exactly once, the
delivery takes assigned partitions over first and says where each resumes
(what the target's committed transactions stored), and lets handed-over ones go.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from confluent_kafka import Consumer, KafkaException, Message, TopicPartition

from .ack_tracker import AckTracker, Partition
from .constants import DRAIN_TIMEOUT_S, FETCH_BATCH
from .metrics import MirrorMetrics
from .record_queue import RecordQueue

log = logging.getLogger(__name__)
LAG_INTERVAL_S = 1.0


class SourceReader:
    """Runs in its own thread; ``topics`` may be replaced at any time (rescan)."""

    def __init__(
        self,
        consumer_config: Mapping[str, Any],
        queue: RecordQueue[Message],
        tracker: AckTracker,
        writer_settled: Callable[[], bool],
        metrics: MirrorMetrics,
        commit_interval_s: float,
        take_over: Callable[[Sequence[Partition]], dict[Partition, int]] | None = None,
        release: Callable[[Iterable[Partition]], None] | None = None,
    ) -> None:
        self.config = dict(consumer_config)
        self.queue = queue
        self.tracker = tracker
        self.writer_settled = writer_settled
        self.metrics = metrics
        self.commit_interval_s = commit_interval_s
        self.take_over = take_over
        self.release = release
        self.topics: frozenset[str] = frozenset()
        self.subscribed: frozenset[str] | None = None
        self.assigned: frozenset[Partition] = frozenset()
        self.lag = 0
        self.stopping = threading.Event()
        self.failure: str | None = None
        self._committed: dict[Partition, int] = {}
        self.thread = threading.Thread(target=self._run, name="mirror-reader", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self, timeout: float) -> None:
        """Stop fetching, commit what the target acknowledged, leave the group."""
        self.stopping.set()
        self.thread.join(timeout)

    def _run(self) -> None:
        try:
            consumer = Consumer(self.config)
        except KafkaException as error:
            self.failure = f"cannot create the source consumer: {error.args[0].str()}"
            return
        next_commit = next_lag = time.monotonic()
        try:
            while not self.stopping.is_set():
                self._follow_topics(consumer)
                if not self.subscribed:
                    time.sleep(0.1)
                    continue
                batch = self._fetch(consumer)
                if batch:
                    self.queue.put(batch, self.stopping)
                now = time.monotonic()
                if now >= next_commit:
                    self._commit(consumer)
                    next_commit = now + self.commit_interval_s
                if now >= next_lag:
                    self._measure_lag(consumer)
                    next_lag = now + LAG_INTERVAL_S
            self._drain()
            self._commit(consumer)
        finally:
            consumer.close()

    def _follow_topics(self, consumer: Consumer) -> None:
        wanted = self.topics
        if wanted == self.subscribed:
            return
        if wanted:
            consumer.subscribe(
                sorted(wanted),
                on_assign=self._assigned,
                on_revoke=self._revoked,
                on_lost=self._lost,
            )
        elif self.subscribed:
            consumer.unsubscribe()
        log.info("Subscribed to %d source topics: %s.", len(wanted), ", ".join(sorted(wanted)))
        self.subscribed = wanted

    def _fetch(self, consumer: Consumer) -> list[Message]:
        batch = []
        for message in consumer.consume(FETCH_BATCH, timeout=0.1):
            error = message.error()
            if error is None:
                batch.append(message)
            elif not error.retriable():
                self.metrics.errors.labels("consume").inc()
                log.warning("Source fetch failed: %s.", error.str())
        return batch

    def _assigned(self, consumer: Consumer, partitions: Sequence[TopicPartition]) -> None:
        if self.take_over is not None:
            keys = [(str(p.topic), int(p.partition)) for p in partitions]
            try:
                resume = self.take_over(keys)
            except KafkaException as error:
                self.failure = f"cannot take source partitions over: {error.args[0].str()}"
                log.error("Mirroring stops: %s.", self.failure)
                self.stopping.set()
                consumer.assign([])  # read nothing rather than from the source's offsets
                return
            for partition, key in zip(partitions, keys, strict=True):
                if key in resume:
                    partition.offset = resume[key]
            consumer.assign(list(partitions))  # the eager protocol: the whole assignment
        self.assigned = self.assigned | {(str(p.topic), int(p.partition)) for p in partitions}
        self.metrics.partitions.set(len(self.assigned))
        log.info("Assigned %d source partitions: %s.", len(partitions), _names(partitions))

    def _revoked(self, consumer: Consumer, partitions: Sequence[TopicPartition]) -> None:
        """Before another process takes these partitions: finish and commit their records."""
        self._drain()
        self._commit(consumer)
        gone = {(str(p.topic), int(p.partition)) for p in partitions}
        self._forget(gone)
        log.info("Handed over %d source partitions: %s.", len(gone), _names(partitions))

    def _lost(self, consumer: Consumer, partitions: Sequence[TopicPartition]) -> None:
        self._forget({(str(p.topic), int(p.partition)) for p in partitions})
        log.warning("Lost %d source partitions without a clean hand-over.", len(partitions))

    def _forget(self, gone: set[Partition]) -> None:
        self.assigned = self.assigned - gone
        self.tracker.forget(gone)
        if self.release is not None:
            self.release(gone)
        for partition in gone:
            self._committed.pop(partition, None)
        self.metrics.partitions.set(len(self.assigned))

    def _drain(self) -> None:
        deadline = time.monotonic() + DRAIN_TIMEOUT_S
        while not self.writer_settled() and time.monotonic() < deadline:
            time.sleep(0.01)

    def _commit(self, consumer: Consumer) -> None:
        due = {
            p: offset
            for p, offset in self.tracker.committable().items()
            if p in self.assigned and self._committed.get(p) != offset
        }
        if not due:
            return
        try:
            consumer.commit(
                offsets=[TopicPartition(t, p, o) for (t, p), o in due.items()], asynchronous=False
            )
        except KafkaException as error:
            self.metrics.errors.labels("commit").inc()
            log.warning("Committing source offsets failed (will retry): %s.", error.args[0].str())
            return
        self._committed.update(due)
        self.metrics.commits.inc()

    def _measure_lag(self, consumer: Consumer) -> None:
        """High watermark minus the first record not acknowledged by the target.

        A partition with nothing dispatched since its assignment falls back to
        the fetch position (records fetched and still queued then do not count).
        """
        acked = self.tracker.committable()
        owned = [TopicPartition(t, p) for t, p in sorted(self.assigned)]
        try:
            fetched = {
                (str(tp.topic), int(tp.partition)): int(tp.offset)
                for tp in consumer.position(owned)
            }
        except KafkaException:
            fetched = {}
        per_topic: dict[str, int] = {}
        for partition in owned:
            key = (str(partition.topic), int(partition.partition))
            _, high = consumer.get_watermark_offsets(partition, cached=True)
            position = acked.get(key, fetched.get(key, -1))
            if high >= 0 and position >= 0:
                per_topic[key[0]] = per_topic.get(key[0], 0) + max(0, high - position)
        for topic, lag in per_topic.items():
            self.metrics.lag.labels(topic).set(lag)
        self.lag = sum(per_topic.values())


def _names(partitions: Sequence[TopicPartition]) -> str:
    return ", ".join(f"{p.topic}/{p.partition}" for p in partitions) or "none"
