"""Start Apache Kafka for a benchmark: N combined broker+controller nodes in KRaft mode.

Each node gets a properties file (``node_properties``), a storage dir formatted
with ``kafka.tools.StorageTool`` (what ``kafka-storage.sh format`` runs), and
a JVM started like ``kafka-server-start.sh`` does (1 GiB heap, G1).
"""

from __future__ import annotations

import base64
import subprocess
import time
import uuid
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from kafka_dist import LOG4J_CONFIG, kafka_libs, write_properties
from running_system import SHARED_SETTINGS, RunningSystem, wait_for_brokers
from secured_listener import PLAINTEXT, PROTOCOLS, ListenerSecurity

from odradek.cli.child_process import ChildProcess, free_port

# kafka-server-start.sh's defaults (KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS).
JVM_OPTIONS = (
    "-Xms1g",
    "-Xmx1g",
    "-XX:+UseG1GC",
    "-XX:MaxGCPauseMillis=20",
    "-XX:InitiatingHeapOccupancyPercent=35",
    "-XX:+ExplicitGCInvokesConcurrent",
    "-Djava.awt.headless=true",
)
STOP_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class KafkaNode:
    node_id: int
    port: int
    inter_broker_port: int
    controller_port: int
    data_dir: Path

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"


def node_properties(
    node: KafkaNode, nodes: list[KafkaNode], extra: Mapping[str, str], security: ListenerSecurity
) -> dict[str, str]:
    """server.properties of one combined node among ``nodes`` (static controller quorum)."""
    replication = str(min(3, len(nodes)))
    listeners = security.listeners(node.port, node.inter_broker_port)
    return {
        "process.roles": "broker,controller",
        "node.id": str(node.node_id),
        "controller.quorum.voters": ",".join(
            f"{peer.node_id}@127.0.0.1:{peer.controller_port}" for peer in nodes
        ),
        "listeners": ",".join([*listeners, f"CONTROLLER://127.0.0.1:{node.controller_port}"]),
        "advertised.listeners": ",".join(listeners),
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.security.protocol.map": ",".join(
            [*(f"{protocol}:{protocol}" for protocol in PROTOCOLS), "CONTROLLER:PLAINTEXT"]
        ),
        **security.broker_settings(),
        "log.dirs": str(node.data_dir),
        "offsets.topic.replication.factor": replication,
        "transaction.state.log.replication.factor": replication,
        "transaction.state.log.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        **SHARED_SETTINGS,
        **extra,
    }


def _java(libs: Path, main_class: str, *arguments: str) -> list[str]:
    return [
        "java",
        *JVM_OPTIONS,
        f"-Dlog4j2.configurationFile={LOG4J_CONFIG}",
        "-cp",
        f"{libs}/*",
        main_class,
        *arguments,
    ]


@contextmanager
def kafka_cluster(
    workdir: Path,
    nodes: int,
    extra: Mapping[str, str] | None = None,
    security: ListenerSecurity = PLAINTEXT,
) -> Iterator[RunningSystem]:
    """``nodes`` formatted and started Kafka nodes, ready in Metadata; stopped on exit."""
    libs = kafka_libs()
    planned = [
        KafkaNode(i, free_port(), free_port(), free_port(), workdir / f"kafka-{i}")
        for i in range(1, nodes + 1)
    ]
    cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()
    configs = []
    for node in planned:
        properties = node_properties(node, planned, extra or {}, security)
        configs.append(write_properties(workdir / f"kafka-{node.node_id}.properties", properties))
    with ExitStack() as stack:
        for config in configs:
            # One argument: an id starting with "-" would read as an option.
            format_storage = ("format", f"--cluster-id={cluster_id}", "-c", str(config))
            subprocess.run(
                _java(libs, "kafka.tools.StorageTool", *format_storage),
                check=True,
                stdout=subprocess.DEVNULL,
            )
        processes = []
        started = time.monotonic()
        for node, config in zip(planned, configs, strict=True):
            process = ChildProcess(
                f"kafka node {node.node_id}",
                _java(libs, "kafka.Kafka", str(config)),
                workdir / f"kafka-{node.node_id}.log",
            )
            process.start()
            stack.callback(process.stop, STOP_TIMEOUT_S)
            processes.append(process)
        bootstrap = ",".join(node.bootstrap for node in planned)
        wait_for_brokers(security.client_settings(bootstrap), nodes)
        ready = time.monotonic() - started
        pids = tuple(process.pid for process in processes)
        data_dirs = tuple(node.data_dir for node in planned)
        yield RunningSystem(
            "kafka", bootstrap, pids, pids, ready, data_dirs, security, tuple(processes)
        )
