"""This broker's part in a multi-broker cluster: its etcd session, the controller
loop, the replica fetchers, ISR upkeep and controlled shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from odradek.broker.cluster.controller import Controller
from odradek.broker.cluster.etcd_client import EtcdClient, EtcdError
from odradek.broker.cluster.etcd_store import EtcdMetadataStore
from odradek.broker.cluster.etcd_tls import etcd_tls
from odradek.broker.cluster.leader_election import NO_LEADER
from odradek.broker.cluster.metadata_image import BrokerRegistration, PartitionState
from odradek.broker.cluster.partition import Partition
from odradek.broker.cluster.peer_security import inter_broker_security
from odradek.broker.cluster.replica_fetcher import FetcherSettings, ReplicaFetcherManager
from odradek.broker.cluster.replica_manager import ReplicaManager
from odradek.broker.cluster.replication_quota import (
    FOLLOWER_THROTTLED_REPLICAS,
    ReplicationQuota,
    throttled_replica,
)
from odradek.broker.config.broker_config import BrokerConfig

log = logging.getLogger(__name__)

ISR_CHECK_INTERVAL_S = 0.5


class ClusterMembership:
    def __init__(
        self, config: BrokerConfig, registration: BrokerRegistration, replicas: ReplicaManager
    ) -> None:
        endpoints = config.get("etcd.endpoints")
        assert isinstance(endpoints, list)
        self._config = config
        self._node_id = registration.node_id
        self._replicas = replicas
        session_s = max(1, round(config.get_int("broker.session.timeout.ms") / 1000))
        tls = etcd_tls(config)
        self.store = EtcdMetadataStore(
            EtcdClient(endpoints, tls=tls.current if tls is not None else None),
            str(config.get("cluster.name")),
            registration,
            session_s,
            config.get_int("broker.heartbeat.interval.ms") / 1000,
        )
        self.fetchers = ReplicaFetcherManager(
            FetcherSettings(
                node_id=registration.node_id,
                max_wait_ms=config.get_int("replica.fetch.wait.max.ms"),
                max_bytes=config.get_int("replica.fetch.response.max.bytes"),
                partition_max_bytes=config.get_int("replica.fetch.max.bytes"),
                quota=ReplicationQuota(
                    lambda: self.effective_config().get_int("follower.replication.throttled.rate"),
                    config.get_int("replication.quota.window.num"),
                    config.get_int("replication.quota.window.size.seconds"),
                ),
                throttled=lambda key: throttled_replica(
                    self.store.image, key, registration.node_id, FOLLOWER_THROTTLED_REPLICAS
                ),
                security=inter_broker_security(config),
            ),
            replicas.find,
        )
        rebalance = config.get_int("leader.imbalance.check.interval.seconds")
        self.controller = Controller(
            self.store,
            registration.node_id,
            self._unclean_allowed,
            rebalance if config.get_bool("auto.leader.rebalance.enable") else None,
        )
        self._tasks: list[asyncio.Task[None]] = []
        # The effective (dynamic) configuration, once the broker can resolve it.
        self.effective_config: Callable[[], BrokerConfig] = lambda: config
        self._offline_replicas_changed = asyncio.Event()
        self.isr_shrinks = 0
        self.isr_expands = 0

    async def start(self) -> None:
        """Register in etcd; the caller subscribes the replica manager to the store.

        The broker leads nothing until the controller has unfenced this registration.
        """
        self._replicas.set_fenced(True)
        await self.store.start()
        self.store.subscribe(lambda old, new: self._update_fencing())
        self._update_fencing()  # the first image may already hold the controller's answer
        self._replicas.on_follow_change(self.fetchers.update)
        loop = asyncio.get_running_loop()
        self._replicas.on_offline_replicas(
            lambda: loop.call_soon_threadsafe(self._offline_replicas_changed.set)
        )
        self._tasks = [
            asyncio.create_task(self.controller.run(), name="controller"),
            asyncio.create_task(self._maintain_isr(), name="isr-upkeep"),
            asyncio.create_task(self._watch_session(), name="etcd-session"),
            asyncio.create_task(self._announce_offline_replicas(), name="offline-replicas"),
        ]

    async def controlled_shutdown(self) -> None:
        """Ask the controller to move this broker's leaderships, and wait until it has."""
        if not self._config.get_bool("controlled.shutdown.enable"):
            return
        timeout = self._config.get_int("controlled.shutdown.timeout.ms") / 1000
        try:
            await self.store.announce_shutdown()
            async with asyncio.timeout(timeout):
                while self._leads_movable_partitions():
                    await asyncio.sleep(0.1)
            log.info("broker %d: leaderships moved, shutting down", self._node_id)
        except TimeoutError:
            log.warning("controlled shutdown incomplete after %ss; stopping anyway", timeout)
        except EtcdError as error:
            log.warning("controlled shutdown incomplete (%s); stopping anyway", error)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self.fetchers.stop()
        await self.store.stop()

    def _leads_movable_partitions(self) -> bool:
        """Whether this broker leads a partition another staying broker could take over."""
        staying = {b for b, leaving in self.store.live_brokers().items() if not leaving}
        return any(
            p.is_leader and any(r != self._node_id and r in staying for r in p.state.isr)
            for p in self._replicas
        )

    def _unclean_allowed(self, topic: str) -> bool:
        metadata = self.store.image.topics.get(topic)
        value = metadata.configs.get("unclean.leader.election.enable") if metadata else None
        if value is None:  # a dynamic config: the effective value
            return self.effective_config().get_bool("unclean.leader.election.enable")
        return value.lower() == "true"

    async def _maintain_isr(self) -> None:
        lag_s = self._config.get_int("replica.lag.time.max.ms") / 1000
        while True:
            await asyncio.sleep(ISR_CHECK_INTERVAL_S)
            image = self.store.image
            brokers = self.store.live_brokers()
            barred = {b for b, going in brokers.items() if going} | image.fenced_brokers()
            offline = image.offline_holders()
            for partition in self._replicas:
                key = partition.key
                unregistered = set(partition.state.replicas) - set(brokers)
                lost = offline.get((key.topic, key.partition), frozenset())
                with contextlib.suppress(EtcdError):
                    await self._update_isr(partition, partition.proposed_isr(
                        lag_s, barred | unregistered | lost
                    ))  # fmt: skip

    async def _update_isr(self, partition: Partition, proposed: PartitionState | None) -> None:
        """Write ``proposed``; with nothing to write, settle an expansion whose write's
        answer was lost (etcd unreachable) once etcd says it did not happen."""
        if proposed is None:
            if partition.joining and await self.store.partition_unchanged(
                partition.key.topic, partition.key.partition
            ):
                partition.expansion_not_written()
            return
        current = partition.state
        partition.expanding(proposed)
        if await self.store.update_partition(partition.key.topic, current, proposed):
            if len(proposed.isr) < len(current.isr):
                self.isr_shrinks += 1
            else:
                self.isr_expands += 1
            log.info("%s: isr %s -> %s", partition.key, list(current.isr), list(proposed.isr))

    async def _announce_offline_replicas(self) -> None:
        """Name this broker's replicas in offline log dirs in its registration, so that the
        controller moves their leadership and ISR places away (Kafka's broker reports its
        offline log dirs to the controller likewise)."""
        while True:
            await self._offline_replicas_changed.wait()
            self._offline_replicas_changed.clear()
            replicas = [(key.topic, key.partition) for key in self._replicas.offline_replicas()]
            while True:
                try:
                    await self.store.announce_offline_replicas(replicas)
                    log.warning(
                        "broker %d: %d replicas in offline log dirs handed to other brokers",
                        self._node_id,
                        len(replicas),
                    )
                    break
                except EtcdError as error:
                    log.warning("cannot announce the offline replicas yet: %s", error)
                    await asyncio.sleep(1)

    def is_ready(self) -> bool:
        """Unfenced by the controller, and in the ISR of every partition it follows that
        has a leader: a restart of it, or of another broker, loses no in-sync copy."""
        return not self._replicas.fenced and all(
            self._node_id in p.state.isr
            for p in self._replicas
            if p.state.leader not in (self._node_id, NO_LEADER)
        )

    def _update_fencing(self) -> None:
        unfenced_epoch = self.store.image.unfenced.get(self._node_id)
        fenced = self.store.session_lost.is_set() or unfenced_epoch != self.store.registration_epoch
        if fenced != self._replicas.fenced:
            log.info("broker %d %s", self._node_id, "fenced" if fenced else "unfenced")
            self._replicas.set_fenced(fenced)

    async def _watch_session(self) -> None:
        while True:
            await self.store.session_lost.wait()
            log.error("broker %d lost its etcd session: leading nothing until back", self._node_id)
            self._update_fencing()
            while self.store.session_lost.is_set():
                try:
                    await self.store.renew_session()
                except EtcdError as error:
                    log.warning("cannot register again yet: %s", error)
                    await asyncio.sleep(1)
            self._update_fencing()
