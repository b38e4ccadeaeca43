"""The broker process: loads the logs, serves Kafka and HTTP, shuts down cleanly."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import fcntl
import logging
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

from aiohttp import web

from odradek.broker.cluster.metadata_image import (
    BrokerEndpoint,
    BrokerRegistration,
    TopicMetadata,
)
from odradek.broker.cluster.metadata_store import EmbeddedMetadataStore, MetadataStore
from odradek.broker.cluster.peer_pool import PeerPool
from odradek.broker.cluster.peer_security import inter_broker_security
from odradek.broker.cluster.replica_manager import ReplicaManager
from odradek.broker.config.broker_config import BrokerConfig
from odradek.broker.group.coordinator import GroupCoordinator
from odradek.broker.group.group_config import GroupConfig
from odradek.broker.group.group_metrics import GroupCollector
from odradek.broker.group.group_partition import OFFSETS_TOPIC
from odradek.broker.log.directory_id import directory_id
from odradek.broker.log.log_config import LogConfig
from odradek.broker.log.log_manager import LogManager
from odradek.broker.protocol.transaction_markers import TransactionMarker
from odradek.broker.security.scram_credential import ScramCredential, ScramMechanism
from odradek.broker.server.authorization import RequestAuthorization, authorizer_from_config
from odradek.broker.server.context import BrokerContext
from odradek.broker.server.http_endpoints import build_http_app
from odradek.broker.server.kafka_listeners import KafkaListeners
from odradek.broker.server.listener_security import ListenerSecurity, listener_security
from odradek.broker.server.log_maintenance import CleanerCollector, LogMaintenance
from odradek.broker.server.loop_watchdog import LoopStallCollector, LoopWatchdog
from odradek.broker.server.metrics import BrokerMetrics, CertificateCollector, PartitionSample
from odradek.broker.server.producer_ids import ProducerIdAllocator
from odradek.broker.server.replication_metrics import ReplicationCollector
from odradek.broker.share.share_broker import ShareBroker
from odradek.broker.share.share_config import ShareConfig
from odradek.broker.share.share_metrics import ShareCollector
from odradek.broker.share.share_partition_manager import ShareGroupSettings
from odradek.broker.transaction.coordinator import TransactionCoordinator
from odradek.broker.transaction.marker_writer import MarkerWriter
from odradek.broker.transaction.transaction_config import TransactionConfig
from odradek.broker.transaction.transaction_metrics import TransactionCollector
from odradek.broker.transaction.verification import AddRetry, TransactionVerifier

if TYPE_CHECKING:
    from odradek.broker.cluster.cluster_membership import ClusterMembership

log = logging.getLogger(__name__)


HALT_GRACE_S = 0.5  # for answers already on their way when every log directory failed


class DataDirInUse(RuntimeError):
    """Another broker process holds the data directory."""


class DataDirFailed(RuntimeError):
    """The first log directory, which holds the broker's own state, failed at start-up."""


class LogDirsFailed(RuntimeError):
    """Every log directory went offline: the broker halts, as Kafka's does."""


class BrokerServer:
    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        self._ready = False
        self._lock_files: list[IO[str]] = []
        self._kafka_listeners: KafkaListeners | None = None
        self._http_runner: web.AppRunner | None = None
        self._maintenance: LogMaintenance | None = None
        self._logs: LogManager | None = None
        self._membership: ClusterMembership | None = None
        # markers, verifications and share-state writes each on connections of their own:
        # none waits behind another (each waits for a replicated write somewhere)
        self._peers: tuple[PeerPool, ...] | None = None
        self.context: BrokerContext | None = None
        self.halted = asyncio.Event()  # every log directory failed
        self._watchdog = LoopWatchdog()

    async def start(self) -> None:
        config = self.config
        self._watchdog.start()
        self._logs = LogManager(*config.log_dirs)
        loop = asyncio.get_running_loop()
        self._logs.failures.on_failure(
            lambda _: loop.call_soon_threadsafe(self._halt_if_no_log_dir_left)
        )
        for log_dir in self._logs.log_dirs:
            try:
                log_dir.mkdir(parents=True, exist_ok=True)
                self._lock_files.append(_lock_data_dir(log_dir))
            except OSError as error:  # as Kafka, it starts without the directory
                self._logs.failures.fail(log_dir, "locking it", error)
        authorizer = authorizer_from_config(config)  # an unknown class stops the start here
        log.info("loading logs from %s", ", ".join(map(str, config.log_dirs)))
        self._logs.load()
        data_dir = self._check_log_dirs_at_start()
        inter_broker = config.inter_broker_listener
        registration = BrokerRegistration(
            config.node_id,
            inter_broker.host,
            inter_broker.port,
            config.get_str("broker.rack"),
            endpoints=tuple(
                BrokerEndpoint(item.name, item.host, item.port)
                for item in config.advertised_listeners
            ),
            directory_id=directory_id(data_dir),
            incarnation=uuid.uuid4().hex,
        )
        replicas = ReplicaManager(config.node_id, self._logs, self._log_config)
        store: MetadataStore
        if config.get("etcd.endpoints"):
            # Imported here: a single broker on the embedded store starts faster without it.
            from odradek.broker.cluster.cluster_membership import ClusterMembership

            self._membership = ClusterMembership(config, registration, replicas)
            log.info("joining cluster %s through etcd", config.get("cluster.name"))
            await self._membership.start()
            store = self._membership.store
        else:
            store = EmbeddedMetadataStore(data_dir, registration)
        metrics = BrokerMetrics(self._partition_samples)
        groups = GroupCoordinator(
            GroupConfig.from_broker(config), store, replicas, self._offsets_min_insync
        )
        producer_ids = ProducerIdAllocator(store)
        producer_ids.start()
        request_timeout_s = config.get_int("request.timeout.ms") / 1000
        marker_peers, verification_peers, share_state_peers = self._peers = (
            PeerPool(store, request_timeout_s, inter_broker_security(config)),
            PeerPool(store, request_timeout_s, inter_broker_security(config)),
            PeerPool(store, request_timeout_s, inter_broker_security(config)),
        )
        transactions = TransactionCoordinator(
            TransactionConfig.from_broker(config),
            store,
            replicas,
            producer_ids.next_id,
            MarkerWriter(
                config.node_id,
                store,
                replicas,
                self._min_insync,
                request_timeout_s,
                marker_peers,
                self._marker_written,
            ),
        )
        self.context = BrokerContext(
            config,
            store,
            replicas,
            metrics,
            producer_ids,
            groups,
            transactions,
            TransactionVerifier(
                config.node_id, transactions, verification_peers, AddRetry.from_broker(config)
            ),
            ShareBroker(
                config.node_id,
                ShareConfig.from_broker(config),
                store,
                replicas,
                share_state_peers,
                self._share_group_settings,
            ),
        )
        if self._membership is not None:
            self._membership.effective_config = self.context_config
        authorization = RequestAuthorization(authorizer, metrics.authorization_denials)
        authorization.apply(None, store.image)
        store.subscribe(authorization.apply)
        self.context.authorization = authorization
        replicas.apply(None, store.image)
        store.subscribe(replicas.apply)
        groups.start()  # after the replicas: it loads the __consumer_offsets partitions they hold
        transactions.start()  # likewise __transaction_state
        self.context.shares.start()  # likewise __share_group_state
        metrics.registry.register(GroupCollector(groups))
        metrics.registry.register(TransactionCollector(transactions))
        metrics.registry.register(ShareCollector(self.context.shares))
        metrics.registry.register(CleanerCollector(self._logs))
        metrics.registry.register(LoopStallCollector(self._watchdog))
        metrics.registry.register(ReplicationCollector(self.context, lambda: self._membership))

        self._http_runner = web.AppRunner(
            build_http_app(metrics.registry, self._is_ready), access_log=None
        )
        await self._http_runner.setup()
        http = config.http_listener
        await web.TCPSite(self._http_runner, http.host, http.port).start()
        securities = [
            listener_security(
                config, listener, self._scram_credential, store.image.scram_decoy_secret
            )
            for listener in config.listeners
        ]
        metrics.registry.register(CertificateCollector(lambda: _certificate_expiries(securities)))
        self._kafka_listeners = KafkaListeners(
            self.context, securities, config.get_int("ssl.reload.check.interval.ms") / 1000
        )
        await self._kafka_listeners.start()
        self._maintenance = LogMaintenance(self._logs, self.context_config)
        self._maintenance.start()
        self._ready = True
        log.info(
            "broker %d ready: Kafka on %s (advertised %s), HTTP on %s, data in %s",
            config.node_id,
            ", ".join(map(str, config.listeners)),
            ", ".join(map(str, config.advertised_listeners)),
            http,
            ", ".join(map(str, config.log_dirs)),
        )

    async def stop(self) -> None:
        """Shut down: cleanly, or after ``halted`` without moving leaderships first (the
        controller elects others when the session ends) and leaving the failed logs to be
        recovered at the next start."""
        self._ready = False
        if self._membership is not None and not self.halted.is_set():
            await self._membership.controlled_shutdown()
        if self._kafka_listeners is not None:
            await self._kafka_listeners.close()
        if self._maintenance is not None:
            await self._maintenance.stop()
        if self.context is not None:
            await self.context.groups.stop()
            await self.context.transactions.stop()
            await self.context.shares.stop()
            await self.context.producer_ids.stop()
        for peers in self._peers or ():
            peers.close()
        if self._http_runner is not None:
            await self._http_runner.cleanup()
        if self._membership is not None:
            await self._membership.stop()
        if self.context is not None:
            await self.context.replicas.log_dir_mover.stop()
            await self.context.replicas.stop()
        if self._logs is not None:
            self._logs.close_all()
        for lock_file in self._lock_files:
            lock_file.close()
        self._watchdog.stop()
        if not self.halted.is_set():
            log.info("broker %d stopped cleanly", self.config.node_id)

    def _check_log_dirs_at_start(self) -> Path:
        """The data directory (the first log directory), once the logs loaded: LogDirsFailed
        if no log directory is online, DataDirFailed if it is offline (it holds the
        broker's own state, as Kafka's metadata log directory, without which Kafka stops)."""
        assert self._logs is not None
        self._halt_if_no_log_dir_left()
        if self.halted.is_set():
            raise LogDirsFailed(
                "all log directories failed: " + ", ".join(map(str, self._logs.log_dirs))
            )
        data_dir = self._logs.log_dirs[0]
        cause = self._logs.failures.offline.get(data_dir)
        if cause is not None:
            raise DataDirFailed(
                f"{data_dir}, which holds the broker's own state, is offline: {cause}"
            )
        return data_dir

    def _halt_if_no_log_dir_left(self) -> None:
        assert self._logs is not None
        if self._logs.online_log_dirs or self.halted.is_set():
            return
        log.error(
            "shutting down broker %d because all log dirs in %s have failed",
            self.config.node_id,
            ", ".join(map(str, self._logs.log_dirs)),
        )
        self._ready = False
        self.halted.set()

    def _is_ready(self) -> bool:
        """Serving, and in a cluster unfenced and in sync (``ClusterMembership.is_ready``)."""
        return self._ready and (self._membership is None or self._membership.is_ready())

    def _log_config(self, topic: TopicMetadata) -> LogConfig:
        assert self.context is not None
        return self.context.topic_config(topic).log_config()

    def _offsets_min_insync(self) -> int:
        return self._min_insync(OFFSETS_TOPIC)

    def _marker_written(self, topic: str, index: int, marker: TransactionMarker) -> None:
        if topic == OFFSETS_TOPIC and self.context is not None:
            self.context.groups.complete_transaction(index, marker.producer_id, marker.commits)

    def _share_group_settings(self, group_id: str) -> ShareGroupSettings:
        """The group's share configs, over the broker's defaults."""
        assert self.context is not None
        config = self.context.config
        group = self.context.store.image.configs_of_group(group_id)
        return ShareGroupSettings(
            auto_offset_reset=group.share_auto_offset_reset(),
            record_lock_duration_ms=group.share_record_lock_duration_ms(
                config.get_int("group.share.record.lock.duration.ms")
            ),
            delivery_count_limit=group.share_delivery_count_limit(
                config.get_int("group.share.delivery.count.limit")
            ),
            partition_max_record_locks=group.share_partition_max_record_locks(
                config.get_int("group.share.partition.max.record.locks")
            ),
            read_committed=group.share_isolation_level() == "read_committed",
        )

    def _min_insync(self, topic: str) -> int:
        assert self.context is not None
        return self.context.min_insync(topic)

    def _partition_samples(self) -> list[PartitionSample]:
        if self.context is None:
            return []
        return [
            (
                p.key.topic,
                p.key.partition,
                p.log.size_bytes,
                p.log.segment_count,
                p.log.log_start_offset,
                p.log.log_end_offset,
                p.high_watermark,
            )
            for p in self.context.replicas
        ]

    def _scram_credential(self, user: str, mechanism: ScramMechanism) -> ScramCredential | None:
        """SCRAM logins check the credentials in the coordination store."""
        if self.context is None:
            return None
        return self.context.store.image.scram_credential(user, mechanism)

    def context_config(self) -> BrokerConfig:
        """The effective configuration (static values under dynamic ones)."""
        return self.context.config if self.context is not None else self.config


def _lock_data_dir(data_dir: Path) -> IO[str]:
    lock_file = (data_dir / ".lock").open("a+")
    try:
        fcntl.flock(lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        lock_file.truncate(0)
        lock_file.write(f"{os.getpid()}\n")
        lock_file.flush()
    except BlockingIOError:
        lock_file.close()
        raise DataDirInUse(f"{data_dir} is in use by another broker") from None
    except OSError:
        with contextlib.suppress(OSError):  # the pid still buffered fails to flush again
            lock_file.close()
        raise
    return lock_file


async def run_broker(config: BrokerConfig, stop: asyncio.Event) -> None:
    """Run until ``stop`` is set, then shut down cleanly; LogDirsFailed once every log
    directory failed."""
    server = BrokerServer(config)
    try:
        await server.start()
        waits = [asyncio.create_task(stop.wait()), asyncio.create_task(server.halted.wait())]
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in waits:
                task.cancel()
        if server.halted.is_set():
            await asyncio.sleep(HALT_GRACE_S)
    finally:
        await server.stop()
    if server.halted.is_set():
        raise LogDirsFailed("all log directories failed: " + ", ".join(map(str, config.log_dirs)))


def _certificate_expiries(
    securities: list[ListenerSecurity],
) -> Iterator[tuple[str, datetime.datetime]]:
    for security in securities:
        if security.tls is not None and security.tls.expires_at is not None:
            yield security.listener.name, security.tls.expires_at
