"""A whole cluster on one machine: etcd (one member or several) and N brokers as child
processes.

Each broker gets its own data dir (``<data-dir>/broker-<id>``), Kafka and HTTP
ports and ``node.id``; racks are assigned round-robin. A single etcd may serve over
TLS (the brokers' settings then name their client certificate); several members
(``<data-dir>/etcd/etcd<i>``) serve plain http, and every broker is given all of them.
With a base port P, broker i listens on P+i (Kafka) and P+100+i (HTTP) and etcd
member i on P+200+2i (clients) and P+201+2i (peers); without one, every port is a
free one.

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
from odradek.cli.etcd_process import EtcdCluster, EtcdProcess, EtcdTls

READY_TIMEOUT_S = 60.0
HTTP_PORT_OFFSET = 100
ETCD_PORT_OFFSET = 200
ETCD_DIR = "etcd"
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

    def settings(self, etcd_endpoints: str) -> dict[str, str]:
        """The broker keys that place it in the cluster (``etcd_endpoints`` comma-separated)."""
        settings = {
            "node.id": str(self.node_id),
            "listeners": f"PLAINTEXT://{self.bootstrap}",
            "http.listener": f"127.0.0.1:{self.http_port}",
            "log.dirs": str(self.data_dir),
            "etcd.endpoints": etcd_endpoints,
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


def etcd_members_in(data_dir: Path) -> int:
    """How many etcd members a local cluster left data for in ``data_dir`` (0: none)."""
    etcd_dir = data_dir / ETCD_DIR
    if (etcd_dir / "member").is_dir():
        return 1
    return len(list(etcd_dir.glob("etcd*/member")))


def local_etcd(
    directory: Path, members: int, base_port: int | None, tls: EtcdTls | None
) -> EtcdProcess | EtcdCluster:
    """One etcd in ``directory`` (serving ``tls`` if given), or ``members`` of them in its
    subdirectories; from port P+200 on with a base port P."""
    first_port = base_port + ETCD_PORT_OFFSET if base_port else None
    if members == 1:
        return EtcdProcess(directory, first_port, first_port + 1 if first_port else None, tls)
    if tls is not None:
        raise ValueError("only a single etcd member serves TLS")
    return EtcdCluster(directory, members, first_port=first_port)


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
        etcd_members: int = 1,
    ) -> None:
        """``etcd_tls`` needs ``etcd_members`` 1."""
        self.data_dir = data_dir
        self.report = report
        self.etcd_dir = data_dir / ETCD_DIR
        self.etcd = local_etcd(self.etcd_dir, etcd_members, base_port, etcd_tls)
        etcd_ports = {port for m in self.etcd.members for port in (m.client_port, m.peer_port)}
        self.specs = plan_brokers(brokers, data_dir, racks, base_port, exclude=etcd_ports)
        self.settings = {**cluster_defaults(brokers), **(settings or {})}
        self.brokers: list[LocalBroker] = []

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(spec.bootstrap for spec in self.specs)

    @property
    def etcd_endpoints(self) -> str:
        """Every etcd member's client URL, comma-separated as ``etcd.endpoints`` takes them."""
        return ",".join(self.etcd.endpoints)

    def start(self, timeout: float = READY_TIMEOUT_S) -> None:
        """Start etcd, then every broker; return once all answer /readyz."""
        members = len(self.etcd.members)
        what = "etcd" if members == 1 else f"{members} etcd members"
        self.report(f"starting {what} (data in {self.etcd_dir})")
        started = time.monotonic()
        self.etcd.start()
        self.report(f"etcd ready at {self.etcd_endpoints} in {time.monotonic() - started:.1f} s")
        for spec in self.specs:
            broker = LocalBroker(spec, {**self.settings, **spec.settings(self.etcd_endpoints)})
            self.brokers.append(broker)
            rack = f", rack {spec.rack}" if spec.rack else ""
            self.report(f"starting broker {spec.node_id} on {spec.bootstrap}{rack}")
            broker.process.start()
        for broker in self.brokers:
            broker.process.wait_ready(broker.is_ready, timeout)
            self.report(f"broker {broker.spec.node_id} ready in {time.monotonic() - started:.1f} s")

    def exited(self) -> list[tuple[ChildProcess, int | None]]:
        """Brokers and etcd members that stopped on their own, with their exit codes."""
        children = [broker.process for broker in self.brokers]
        children += [member.process for member in self.etcd.members]
        return [
            (child, child.process.returncode if child.process else None)
            for child in children
            if not child.is_running()
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
        if any(member.process.is_running() for member in self.etcd.members):
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
