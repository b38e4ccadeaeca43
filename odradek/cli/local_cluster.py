"""A whole cluster on one machine: an etcd and N brokers as child processes.

Each broker gets its own data dir (``<data-dir>/broker-<id>``), Kafka and HTTP
ports and ``node.id``; racks are assigned round-robin. etcd may serve over TLS (the
brokers' settings then name their client certificate). With a base port P,
broker i listens on P+i (Kafka) and P+100+i (HTTP) and etcd on P+200 (clients)
and P+201 (peers); without one, every port is a free one.

Brokers stop one at a time with SIGTERM, so each controlled shutdown can move
its leaderships to brokers still running; etcd stops last.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from odradek.cli.child_process import ChildProcess, free_ports, http_status
from odradek.cli.etcd_process import EtcdProcess, EtcdTls

READY_TIMEOUT_S = 60.0
HTTP_PORT_OFFSET = 100
ETCD_PORT_OFFSET = 200
REPLICATION_DEFAULT_CAP = 3
# A broker stopping last may wait for leaderships no running broker can take.
BROKER_STOP_TIMEOUT_S = 40.0

Report = Callable[[str], None]


def _silent(message: str) -> None:
    pass


@dataclass(frozen=True)
class BrokerSpec:
    """Where one local broker lives."""

    node_id: int
    port: int
    http_port: int
    data_dir: Path
    rack: str | None = None

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def ready_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}/readyz"

    def settings(self, etcd_endpoint: str) -> dict[str, str]:
        """The broker keys that place it in the cluster."""
        settings = {
            "node.id": str(self.node_id),
            "listeners": f"PLAINTEXT://{self.bootstrap}",
            "http.listener": f"127.0.0.1:{self.http_port}",
            "log.dirs": str(self.data_dir),
            "etcd.endpoints": etcd_endpoint,
        }
        if self.rack:
            settings["broker.rack"] = self.rack
        return settings


def plan_brokers(
    count: int,
    data_dir: Path,
    racks: Sequence[str] = (),
    base_port: int | None = None,
    exclude: Collection[int] = (),
) -> list[BrokerSpec]:
    """Specs for brokers 0..count-1, racks round-robin, ports from ``base_port`` or free
    (distinct, and none of ``exclude``: ports already promised to etcd)."""
    chosen = []
    if not base_port:
        candidates = free_ports(2 * count + len(exclude))
        chosen = [port for port in candidates if port not in exclude][: 2 * count]
    return [
        BrokerSpec(
            node_id=node_id,
            port=base_port + node_id if base_port else chosen[2 * node_id],
            http_port=(
                base_port + HTTP_PORT_OFFSET + node_id if base_port else chosen[2 * node_id + 1]
            ),
            data_dir=data_dir / f"broker-{node_id}",
            rack=racks[node_id % len(racks)] if racks else None,
        )
        for node_id in range(count)
    ]


def cluster_defaults(brokers: int) -> dict[str, str]:
    """Replication defaults for a local cluster: three copies, or as many as there are brokers."""
    factor = str(min(brokers, REPLICATION_DEFAULT_CAP))
    return {"default.replication.factor": factor, "offsets.topic.replication.factor": factor}


def odradek_argv() -> list[str]:
    """The argv prefix that runs ``odradek`` with this interpreter."""
    script = Path(sys.executable).parent / "odradek"
    if script.is_file() and os.access(script, os.X_OK):
        return [str(script)]
    return [sys.executable, "-c", "from odradek.cli.main import main; main()"]


class LocalBroker:
    """One broker child process made from a ``BrokerSpec``."""

    def __init__(self, spec: BrokerSpec, settings: Mapping[str, str]) -> None:
        self.spec = spec
        argv = [*odradek_argv(), "broker"]
        for key, value in settings.items():
            argv += ["--set", f"{key}={value}"]
        environment = {k: v for k, v in os.environ.items() if not k.startswith("ODRADEK_")}
        log_path = spec.data_dir.parent / f"broker-{spec.node_id}.log"
        self.process = ChildProcess(f"broker {spec.node_id}", argv, log_path, env=environment)

    def is_ready(self) -> bool:
        return http_status(self.spec.ready_url) == 200


class LocalCluster:
    """etcd plus brokers under one data dir; ``report`` receives progress lines."""

    def __init__(
        self,
        data_dir: Path,
        brokers: int,
        racks: Sequence[str] = (),
        base_port: int | None = None,
        settings: Mapping[str, str] | None = None,
        etcd_tls: EtcdTls | None = None,
        report: Report = _silent,
    ) -> None:
        self.data_dir = data_dir
        self.report = report
        self.etcd = EtcdProcess(
            data_dir / "etcd",
            base_port + ETCD_PORT_OFFSET if base_port else None,
            base_port + ETCD_PORT_OFFSET + 1 if base_port else None,
            etcd_tls,
        )
        etcd_ports = {self.etcd.client_port, self.etcd.peer_port}
        self.specs = plan_brokers(brokers, data_dir, racks, base_port, exclude=etcd_ports)
        self.settings = {**cluster_defaults(brokers), **(settings or {})}
        self.brokers: list[LocalBroker] = []

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(spec.bootstrap for spec in self.specs)

    def start(self, timeout: float = READY_TIMEOUT_S) -> None:
        """Start etcd, then every broker; return once all answer /readyz."""
        self.report(f"starting etcd (data in {self.etcd.data_dir})")
        started = time.monotonic()
        self.etcd.start()
        self.report(f"etcd ready at {self.etcd.endpoint} in {time.monotonic() - started:.1f} s")
        for spec in self.specs:
            broker = LocalBroker(spec, {**self.settings, **spec.settings(self.etcd.endpoint)})
            self.brokers.append(broker)
            rack = f", rack {spec.rack}" if spec.rack else ""
            self.report(f"starting broker {spec.node_id} on {spec.bootstrap}{rack}")
            broker.process.start()
        for broker in self.brokers:
            broker.process.wait_ready(broker.is_ready, timeout)
            self.report(f"broker {broker.spec.node_id} ready in {time.monotonic() - started:.1f} s")

    def exited(self) -> list[tuple[LocalBroker, int | None]]:
        """Brokers that stopped on their own, with their exit codes."""
        return [
            (broker, broker.process.process.returncode if broker.process.process else None)
            for broker in self.brokers
            if not broker.process.is_running()
        ]

    def stop(self) -> None:
        """Stop the brokers one at a time (SIGTERM), then etcd."""
        for broker in self.brokers:
            if not broker.process.is_running():
                continue
            self.report(f"stopping broker {broker.spec.node_id}")
            began = time.monotonic()
            code = broker.process.stop(BROKER_STOP_TIMEOUT_S)
            self.report(
                f"broker {broker.spec.node_id} stopped (exit code {code}) "
                f"in {time.monotonic() - began:.1f} s"
            )
        if self.etcd.process.is_running():
            self.report("stopping etcd")
            self.etcd.stop()
        self.report("cluster stopped")

    def kill(self) -> None:
        """SIGKILL every process: when a clean stop is not wanted or takes too long."""
        for broker in self.brokers:
            broker.process.kill()
        self.etcd.kill()

    def remove_data(self) -> None:
        shutil.rmtree(self.data_dir, ignore_errors=True)
