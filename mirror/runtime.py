"""One mirror process: reader and writer threads, periodic rescans and checkpoints, HTTP side.

The periodic work (topic rescan, offset syncs, checkpoints, progress log)
runs as asyncio tasks whose blocking admin calls go to worker threads; the
record path never touches the event loop. A failure of the pipeline ends the
process with an error so that its supervisor restarts it from the committed
offsets.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from confluent_kafka import KafkaException, Message, Producer
from confluent_kafka.admin import AdminClient  # type: ignore[attr-defined]

from .ack_tracker import AckTracker
from .checkpointer import Checkpointer
from .config import Endpoint, MirrorConfig
from .constants import CONSUMER_DEFAULTS, PRODUCER_DEFAULTS, PROGRESS_LOG_INTERVAL_S
from .delivery import AtLeastOnce, ExactlyOnce
from .http_server import mirror_http_app, start_http
from .internal_topics import offset_sync_from_record, read_latest
from .metrics import MirrorMetrics
from .naming import NameFilter, NamingPolicy
from .offset_translation import OffsetMaps
from .record_queue import RecordQueue
from .source_reader import SourceReader
from .target_writer import TargetWriter
from .topic_sync import MirroredTopic, TopicSync

log = logging.getLogger(__name__)
STOP_TIMEOUT_S = 60.0


def client_config(endpoint: Endpoint, **defaults: Any) -> dict[str, Any]:
    """librdkafka config of one side: defaults, then the endpoint's own settings."""
    return {
        "bootstrap.servers": endpoint.bootstrap_servers,
        "log_level": 3,
        **defaults,
        **endpoint.client_config,
    }


class MirrorProcess:
    """Everything one ``odradek mirror`` process runs."""

    def __init__(self, config: MirrorConfig) -> None:
        self.config = config
        self.metrics = MirrorMetrics()
        self.policy = NamingPolicy.of(config)
        self.offsets = OffsetMaps()
        tracker = AckTracker()
        queue: RecordQueue[Message] = RecordQueue(config.queue_size)
        client_id = f"odradek-mirror-{config.name}"
        producer_config = client_config(
            config.target,
            **PRODUCER_DEFAULTS,
            # bounds what is in flight to the target, hence duplicates after a crash
            **{"client.id": client_id, "queue.buffering.max.messages": config.queue_size},
        )
        exactly_once = (
            ExactlyOnce(
                producer_config,
                client_config(config.target),
                config.group_id,
                config.name,
                self.policy.mirror_offsets_topic,
            )
            if config.exactly_once
            else None
        )
        self.writer = TargetWriter(
            exactly_once or AtLeastOnce(producer_config),
            config.source.alias,
            config.target.alias,
            queue,
            tracker,
            self.offsets,
            self.metrics,
        )
        self.reader = SourceReader(
            client_config(
                config.source,
                **CONSUMER_DEFAULTS,
                **{"group.id": config.group_id, "client.id": client_id},
            ),
            queue,
            tracker,
            self.writer.settled,
            self.metrics,
            config.commit_interval_s,
            exactly_once.take_over if exactly_once else None,
            exactly_once.release if exactly_once else None,
        )
        source_admin = AdminClient(client_config(config.source))
        target_admin = AdminClient(client_config(config.target))
        self.topic_sync = TopicSync(
            self.policy,
            NameFilter.of(config.topics),
            source_admin,
            target_admin,
            self.metrics,
            config.replication_factor,
        )
        self.checkpointer = Checkpointer(
            self.policy,
            NameFilter.of(config.groups),
            config.group_id,
            source_admin,
            target_admin,
            Producer(client_config(config.target, acks="all")),
            self.offsets,
            self.metrics,
        )
        self.routes: dict[str, MirroredTopic] = {}
        self.synced_once = False

    # -- health ---------------------------------------------------------------

    def failure(self) -> str | None:
        return self.writer.failure or self.reader.failure

    def alive(self) -> str | None:
        if failure := self.failure():
            return failure
        if self.synced_once and not (
            self.reader.thread.is_alive() and self.writer.thread.is_alive()
        ):
            return "a mirroring thread has stopped"
        return None

    def ready(self) -> str | None:
        if not self.synced_once:
            return "the target topics are not synced yet"
        return self.alive()

    # -- periodic work ----------------------------------------------------------

    def rescan(self) -> None:
        routes = self.topic_sync.run()
        added = sorted(set(routes) - set(self.routes))
        if added:
            log.info("Mirroring %d new source topics: %s.", len(added), ", ".join(added))
        self.routes = routes
        # topics no longer selected keep their route for records still queued
        self.writer.routes = {**self.writer.routes, **routes}
        self.reader.topics = frozenset(routes)

    def restore_offset_syncs(self) -> None:
        """Seed the offset maps from the offset-syncs topic (partitions mirrored earlier)."""
        stored = read_latest(client_config(self.config.target), self.policy.offset_syncs_topic)
        for key, value in stored.items():
            self.offsets.restore(*offset_sync_from_record(key, value))
        log.info("Restored offset syncs of %d source partitions.", len(stored))

    def publish_offset_syncs(self) -> None:
        self.checkpointer.publish_offset_syncs(self.reader.assigned)

    def checkpoint(self) -> None:
        sync = self.config.checkpoints.sync_group_offsets
        self.checkpointer.checkpoint(self.routes, self.reader.assigned, sync)

    async def _every(self, seconds: float, what: str, work: Callable[[], None]) -> None:
        while True:
            await asyncio.sleep(seconds)
            try:
                await asyncio.to_thread(work)
            except KafkaException as error:
                self.metrics.errors.labels(what.replace(" ", "_")).inc()
                log.warning("The %s failed (retrying in %g s): %s.", what, seconds, error)

    async def _progress(self) -> None:
        last, since = 0, time.monotonic()
        while True:
            await asyncio.sleep(PROGRESS_LOG_INTERVAL_S)
            total = self.writer.acknowledged
            now = time.monotonic()
            log.info(
                "Mirrored %d records in the last %.0f s (%d in all); "
                "%d partitions, lag %d, %d queued.",
                total - last,
                now - since,
                total,
                len(self.reader.assigned),
                self.reader.lag,
                len(self.writer.queue),
            )
            last, since = total, now

    # -- lifecycle ----------------------------------------------------------------

    async def _first_sync(self) -> None:
        while True:
            try:
                await asyncio.to_thread(
                    self.topic_sync.ensure_internal_topics, self.config.exactly_once
                )
                await asyncio.to_thread(self.rescan)
                break
            except KafkaException as error:
                self.metrics.errors.labels("topic_sync").inc()
                log.warning("Cannot sync topics yet (retrying): %s.", error)
                await asyncio.sleep(min(5.0, self.config.refresh_interval_s))
        try:
            await asyncio.to_thread(self.restore_offset_syncs)
        except KafkaException as error:
            log.warning("Could not restore offset syncs: %s.", error)
        self.synced_once = True

    async def run(self, stop: asyncio.Event, http: tuple[str, int] | None) -> int:
        """Mirror until ``stop`` is set (exit code 0) or the pipeline fails (1)."""
        config = self.config
        runner = None
        if http is not None:
            app = mirror_http_app(self.metrics.registry, self.alive, self.ready)
            runner = await start_http(app, *http)
            log.info("Serving /healthz, /readyz and /metrics on %s:%d.", *http)
        log.info(
            "Mirroring %s (%s) to %s (%s) as group %s, naming %s.",
            config.source.alias,
            config.source.bootstrap_servers,
            config.target.alias,
            config.target.bootstrap_servers,
            config.group_id,
            config.naming,
        )
        tasks: list[asyncio.Task[None]] = []
        try:
            await self._race(stop, self._first_sync())
            if stop.is_set():
                return 0
            self.writer.start()
            self.reader.start()
            periodic: list[Awaitable[None]] = [
                self._every(config.refresh_interval_s, "topic rescan", self.rescan),
                self._progress(),
            ]
            if config.offset_sync.enabled:
                sync_s = config.offset_sync.interval_s
                periodic.append(self._every(sync_s, "offset sync", self.publish_offset_syncs))
            if config.checkpoints.enabled:
                point_s = config.checkpoints.interval_s
                periodic.append(self._every(point_s, "checkpoint", self.checkpoint))
            tasks = [asyncio.ensure_future(work) for work in periodic]
            while not stop.is_set() and self.alive() is None:
                await self._race(stop, asyncio.sleep(0.5))
            failure = self.alive()
            return 1 if failure else 0
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.to_thread(self._stop_pipeline)
            if runner is not None:
                await runner.cleanup()

    async def _race(self, stop: asyncio.Event, work: Awaitable[None]) -> None:
        """Await ``work`` unless ``stop`` is set first."""
        waiter = asyncio.ensure_future(stop.wait())
        job = asyncio.ensure_future(work)
        await asyncio.wait([waiter, job], return_when=asyncio.FIRST_COMPLETED)
        for task in (waiter, job):
            task.cancel()

    def _stop_pipeline(self) -> None:
        if self.reader.thread.is_alive():
            self.reader.stop(STOP_TIMEOUT_S)
        if self.writer.thread.is_alive():
            self.writer.stop(STOP_TIMEOUT_S)
        log.info("Stopped; source offsets committed up to what the target acknowledged.")
