"""A real cluster for integration tests: an etcd and N `odradek broker` processes.

``Cluster`` starts brokers joined through an etcd (``odradek.cli.etcd_process``: one
member, or an ``EtcdCluster`` of several whose every member the brokers are given),
each a ``broker_process.Broker`` with its own data dir, ports, ``node.id`` and,
optionally, rack. Faults: ``kill`` (SIGKILL), ``pause``/``resume``
(SIGSTOP/SIGCONT), ``restart`` on the same data dir or an emptied one. State
comes from Metadata (v12) sent to a broker that is running and not paused:
brokers, controller, each partition's leader, replicas and ISR. ``wait_until``
polls a condition with a bound. A ``ClusterSecurity`` (secured_cluster.py) gives the
brokers secured listeners and the harness's own clients their settings. The fixtures
(``etcd``, ``cluster_factory``, ``secured_cluster_factory``) live in conftest.py and clean
up every process and directory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import ssl
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from broker_process import LIVE_BROKERS, Broker, unique_name
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, NewTopic
from kafka_wire import LATEST_TIMESTAMP, WireClient

from odradek.cli.child_process import wait_until
from odradek.cli.cluster_state import BrokerInfo, ClusterState, PartitionInfo
from odradek.cli.etcd_process import EtcdCluster, EtcdProcess, EtcdTls

# Short sessions so that failures are noticed within a few seconds, refreshed often enough
# that a stall of the whole machine (brokers and etcd at once; a busy 2-core machine has
# them, of a second or more) costs no session unless it lasts 1.75 s.
FAST_FAILOVER = {
    "broker.session.timeout.ms": "2000",
    "broker.heartbeat.interval.ms": "250",
    "replica.lag.time.max.ms": "3000",
    "replica.fetch.wait.max.ms": "200",
    "controlled.shutdown.timeout.ms": "15000",
}
WAIT_S = 60.0
KEEP_DIRS_ENV = "ODRADEK_KEEP_CLUSTER_DIRS"  # set to keep brokers' data and logs for a post-mortem


class ClusterSecurity(Protocol):
    """Secured listeners for the brokers, and what the harness's clients connect with."""

    def broker_settings(self, node_id: int, broker: Broker) -> dict[str, str]:
        """Settings of broker ``node_id``; ``broker.bootstrap`` stays the clients' address."""
        ...

    def client_config(self) -> dict[str, str]:
        """confluent-kafka settings for ``Broker.bootstrap``."""
        ...

    def wire_tls(self) -> ssl.SSLContext | None: ...

    def prepare(self, cluster: Cluster) -> None:
        """Run once every broker is registered (e.g. the inter-broker SCRAM credential)."""
        ...


class Cluster:
    """Brokers 0..N-1 registered in ``etcd``."""

    def __init__(
        self,
        workdir: Path,
        etcd: EtcdProcess | EtcdCluster,
        brokers: int,
        racks: Sequence[str] = (),
        settings: Mapping[str, str] | None = None,
        security: ClusterSecurity | None = None,
        per_node: Mapping[int, Mapping[str, str]] | None = None,
    ) -> None:
        self.workdir = workdir
        self.etcd = etcd
        self.security = security
        self.client_config = security.client_config() if security is not None else {}
        self.wire_tls = security.wire_tls() if security is not None else None
        self.paused: set[int] = set()
        self.brokers: dict[int, Broker] = {}
        for node_id in range(brokers):
            node_settings = {
                **FAST_FAILOVER,
                **(settings or {}),
                "node.id": str(node_id),
                "etcd.endpoints": ",".join(etcd.endpoints),
            }
            if racks:
                node_settings["broker.rack"] = racks[node_id % len(racks)]
            broker_dir = workdir / f"broker-{node_id}"
            broker_dir.mkdir(parents=True)
            broker = self.brokers[node_id] = Broker(broker_dir, settings=node_settings)
            if security is not None:
                broker.settings.update(security.broker_settings(node_id, broker))
            broker.settings.update((per_node or {}).get(node_id, {}))

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> Cluster:
        for broker in self.brokers.values():
            broker.start(wait=False)
        for broker in self.brokers.values():
            broker.wait_ready()
        self.wait_until(lambda: len(self.state().brokers) == len(self.brokers), "all registered")
        if self.security is not None:
            self.security.prepare(self)
        return self

    def close(self) -> None:
        """SIGKILL every broker (a clean stop is not what teardown tests) and forget them."""
        for broker in self.brokers.values():
            broker.kill()
            if broker in LIVE_BROKERS:
                LIVE_BROKERS.remove(broker)
        self.paused.clear()

    # -- faults ------------------------------------------------------------------------------

    def kill(self, node_id: int) -> None:
        """SIGKILL: a crash with no shutdown work."""
        self.brokers[node_id].kill()
        self.paused.discard(node_id)

    def stop(self, node_id: int) -> int | None:
        """SIGTERM and wait: a controlled shutdown. Returns the exit code."""
        return self.brokers[node_id].stop(timeout=WAIT_S)

    def pause(self, node_id: int) -> None:
        """SIGSTOP: the broker keeps its sockets but answers nothing and renews no lease."""
        self.paused.add(node_id)
        os.killpg(self.brokers[node_id].pid, signal.SIGSTOP)

    def resume(self, node_id: int) -> None:
        os.killpg(self.brokers[node_id].pid, signal.SIGCONT)
        self.paused.discard(node_id)

    def restart(self, node_id: int, *, empty_disk: bool = False) -> None:
        """Start a stopped or killed broker again, on its data dir or on an empty one.

        Waits first until the cluster has seen its old registration go: a broker on its
        own data dir would replace that registration at once, one on an empty disk is
        refused while the old lease lives.
        """
        broker = self.brokers[node_id]
        assert not broker.is_running(), f"broker {node_id} is still running"
        self.wait_until(
            lambda: node_id not in self.registered(), f"broker {node_id}'s session expired"
        )
        if empty_disk:
            shutil.rmtree(broker.data_dir)
        broker.start(timeout=WAIT_S)

    def create_topic(
        self,
        partitions: int,
        replication_factor: int = 3,
        configs: Mapping[str, str] | None = None,
        prefix: str = "topic",
    ) -> str:
        """Create a topic with a fresh name; returns once all its replicas are in sync."""
        name = unique_name(prefix)
        admin = AdminClient(
            {"bootstrap.servers": self.bootstrap, "log_level": 0, **self.client_config}
        )
        new = NewTopic(name, partitions, replication_factor, config=dict(configs or {}))
        admin.create_topics([new])[name].result(timeout=WAIT_S)
        self.wait_until(lambda: self.fully_replicated(name), f"{name} fully replicated")
        return name

    # -- observation -------------------------------------------------------------------------

    @property
    def bootstrap(self) -> str:
        """Every broker's address, for clients that must survive any one of them."""
        return ",".join(broker.bootstrap for broker in self.brokers.values())

    def reachable(self) -> list[int]:
        """Brokers running and not paused."""
        return [
            node_id
            for node_id, broker in self.brokers.items()
            if broker.is_running() and node_id not in self.paused
        ]

    def state(self, via: int | None = None) -> ClusterState:
        """Brokers, controller and partitions from one Metadata request to ``via`` (or any
        reachable broker)."""
        candidates = [via] if via is not None else self.reachable()
        last_error: Exception | None = None
        for node_id in candidates:
            try:
                with WireClient.to(
                    self.brokers[node_id].bootstrap, timeout=5.0, tls=self.wire_tls
                ) as wire:
                    return _cluster_state(wire.metadata(None))
            except (OSError, ConnectionError) as error:
                last_error = error
        raise AssertionError(f"no broker answered Metadata: {last_error}")

    def registered(self) -> set[int]:
        return {broker.node_id for broker in self.state().brokers}

    def controller(self) -> int:
        return self.state().controller_id

    def partition(self, topic: str, partition: int) -> PartitionInfo:
        for info in self.state().partitions:
            if (info.topic, info.partition) == (topic, partition):
                return info
        raise AssertionError(f"no partition {topic}-{partition} in Metadata")

    def leader_of(self, topic: str, partition: int) -> int:
        return self.partition(topic, partition).leader

    def high_watermark(self, topic: str, partition: int) -> int:
        """ListOffsets latest on the partition's leader: the high watermark, asking again
        while the answer is an error (a new leader answers the retriable OFFSET_NOT_AVAILABLE
        until its followers' first fetches bring its high watermark to its log end)."""
        answers: list[int] = []

        def answered() -> bool:
            leader = self.leader_of(topic, partition)
            with WireClient.to(self.brokers[leader].bootstrap, tls=self.wire_tls) as wire:
                answers.append(wire.list_offset(topic, partition, LATEST_TIMESTAMP))
            return True

        self.wait_until(answered, f"the high watermark of {topic}-{partition}")
        return answers[-1]

    def fully_replicated(self, topic: str | None = None) -> bool:
        """Every partition (of ``topic``) led by a reachable broker with its whole ISR."""
        return self._all_led_with(topic, lambda p: set(p.isr) == set(p.replicas))

    def min_insync_everywhere(self, topic: str, min_insync: int) -> bool:
        """Every partition of ``topic`` led by a reachable broker with ``min_insync`` in sync."""
        return self._all_led_with(topic, lambda p: len(p.isr) >= min_insync)

    def _all_led_with(self, topic: str | None, isr_ok: Callable[[PartitionInfo], bool]) -> bool:
        reachable = set(self.reachable())
        partitions = [p for p in self.state().partitions if topic in (None, p.topic)]
        return bool(partitions) and all(p.leader in reachable and isr_ok(p) for p in partitions)

    def wait_until(
        self, condition: Callable[[], bool], what: str, timeout: float = WAIT_S
    ) -> float:
        """Poll ``condition`` until it holds; seconds taken. Failed requests (to a broker that
        just died, say) count as not yet."""

        def holds() -> bool:
            try:
                return condition()
            except (AssertionError, OSError, ConnectionError, KafkaException):
                return False

        return wait_until(holds, timeout, what, interval=0.1)


def _cluster_state(body: Any) -> ClusterState:
    """The harness's view of a Metadata v12 response."""
    nodes = sorted(body.brokers, key=lambda node: int(node.node_id))
    brokers = tuple(BrokerInfo(int(b.node_id), b.host, int(b.port), b.rack) for b in nodes)
    partitions = tuple(
        PartitionInfo(
            topic.name,
            int(p.partition_index),
            int(p.leader_id),
            tuple(int(r) for r in p.replica_nodes),
            tuple(int(r) for r in p.isr_nodes),
        )
        for topic in body.topics
        for p in sorted(topic.partitions, key=lambda p: int(p.partition_index))
    )
    return ClusterState(str(body.cluster_id), int(body.controller_id), brokers, partitions)


class ClusterFactory(Protocol):
    """Makes a started cluster of ``brokers`` brokers that the fixture tears down."""

    def __call__(
        self,
        brokers: int = 3,
        racks: Sequence[str] = (),
        settings: Mapping[str, str] | None = None,
        per_node: Mapping[int, Mapping[str, str]] | None = None,
    ) -> Cluster: ...


@contextlib.contextmanager
def running_etcd(workdir: Path, tls: EtcdTls | None = None) -> Iterator[EtcdProcess]:
    """An etcd on free loopback ports in ``workdir`` (serving TLS with ``tls``); killed and
    removed afterwards."""
    etcd = EtcdProcess(workdir / "etcd", tls=tls)
    try:
        yield etcd.start()
    finally:
        etcd.kill()
        shutil.rmtree(workdir / "etcd", ignore_errors=True)


@contextlib.contextmanager
def cluster_pool(
    workdir: Path, etcd: EtcdProcess, security: ClusterSecurity | None = None
) -> Iterator[ClusterFactory]:
    """Clusters on one etcd (each under its own cluster.name); all killed afterwards."""
    clusters: list[Cluster] = []

    def make(
        brokers: int = 3,
        racks: Sequence[str] = (),
        settings: Mapping[str, str] | None = None,
        per_node: Mapping[int, Mapping[str, str]] | None = None,
    ) -> Cluster:
        name = f"cluster-{len(clusters)}"
        cluster = Cluster(
            workdir / name,
            etcd,
            brokers,
            racks,
            {"cluster.name": name, **(settings or {})},
            security,
            per_node,
        )
        clusters.append(cluster)
        return cluster.start()

    try:
        yield make
    finally:
        for cluster in clusters:
            cluster.close()
        if not os.environ.get(KEEP_DIRS_ENV):
            shutil.rmtree(workdir, ignore_errors=True)
