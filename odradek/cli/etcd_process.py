"""etcd on loopback, each member with its own data dir: the coordination store of a local
cluster (``odradek cluster up``, integration tests). A single member may serve its clients
over TLS and require their certificates (``EtcdTls``); ``EtcdCluster`` runs several
members as one cluster, so that tests can kill, pause and cut members and the leader."""

from __future__ import annotations

import json
import shutil
import ssl
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from odradek.cli.child_process import (
    ChildProcess,
    ProcessStartError,
    free_port,
    free_ports,
    http_status,
)

ETCD_BINARY = "etcd"
READY_TIMEOUT_S = 20.0


def find_etcd() -> str:
    """The etcd executable on ``PATH`` (Debian's etcd-server installs /usr/bin/etcd)."""
    found = shutil.which(ETCD_BINARY)
    if found is None:
        raise ProcessStartError("etcd is not installed (apt-get install etcd-server)")
    return found


@dataclass(frozen=True)
class EtcdTls:
    """PEM files: etcd's certificate and key, and the CA client certificates must be signed
    by (``--client-cert-auth``); ``client_cert``/``client_key`` is what its health check
    shows."""

    cert_file: Path
    key_file: Path
    trusted_ca_file: Path
    client_cert: Path
    client_key: Path

    def arguments(self) -> list[str]:
        return [
            f"--cert-file={self.cert_file}",
            f"--key-file={self.key_file}",
            f"--trusted-ca-file={self.trusted_ca_file}",
            "--client-cert-auth",
        ]

    def client_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.trusted_ca_file))
        context.load_cert_chain(self.client_cert, self.client_key)
        return context


class EtcdProcess:
    """etcd serving clients on ``127.0.0.1:client_port``; free ports when none are given."""

    def __init__(
        self,
        data_dir: Path,
        client_port: int | None = None,
        peer_port: int | None = None,
        tls: EtcdTls | None = None,
        name: str = "default",
        initial_cluster: str | None = None,
        extra_arguments: tuple[str, ...] = (),
    ) -> None:
        """``initial_cluster`` (``name=peer URL,...``) makes it a member of a cluster; alone,
        it is a cluster of one."""
        self.tls = tls
        self.name = name
        self.initial_cluster = initial_cluster
        self.extra_arguments = extra_arguments
        self.data_dir = data_dir
        self._fixed_ports = client_port is not None
        self.client_port = client_port or free_port()
        self.peer_port = peer_port or free_port()
        self.log_path = data_dir.parent / f"{data_dir.name}.log"
        self.process = ChildProcess("etcd", [], self.log_path)

    @property
    def endpoint(self) -> str:
        """The client URL brokers take as ``etcd.endpoints``."""
        scheme = "https" if self.tls is not None else "http"
        return f"{scheme}://127.0.0.1:{self.client_port}"

    @property
    def peer_url(self) -> str:
        return f"http://127.0.0.1:{self.peer_port}"

    def command(self) -> list[str]:
        client, peer = self.endpoint, self.peer_url
        return [
            find_etcd(),
            f"--name={self.name}",
            f"--data-dir={self.data_dir}",
            f"--listen-client-urls={client}",
            f"--advertise-client-urls={client}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster={self.initial_cluster or f'{self.name}={peer}'}",
            "--listen-metrics-urls=",
            "--log-level=warn",
            "--logger=zap",
            *(self.tls.arguments() if self.tls is not None else []),
            *self.extra_arguments,
        ]

    def is_ready(self) -> bool:
        if self.tls is None:
            return http_status(f"{self.endpoint}/health") == 200
        try:
            with urllib.request.urlopen(
                f"{self.endpoint}/health", timeout=1.0, context=self.tls.client_context()
            ) as response:
                return bool(response.status == 200)
        except (OSError, ValueError):
            return False

    def start(self, timeout: float = READY_TIMEOUT_S) -> EtcdProcess:
        """Start etcd and wait until it is healthy; ports lost to a race are chosen again once."""
        try:
            self._spawn_and_wait(timeout)
        except ProcessStartError:
            if self._fixed_ports or self.process.is_running():
                raise
            self.client_port, self.peer_port = free_port(), free_port()
            self._spawn_and_wait(timeout)
        return self

    def _spawn_and_wait(self, timeout: float) -> None:
        self.spawn()
        self.process.wait_ready(self.is_ready, timeout)

    def spawn(self) -> None:
        """Start the process without waiting: a cluster's members are healthy only once
        enough of them run to elect a leader."""
        self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.process.argv = self.command()
        self.process.start()

    def stop(self) -> None:
        self.process.stop()

    def kill(self) -> None:
        self.process.kill()


class EtcdCluster:
    """``members`` etcd members on loopback forming one cluster (fresh ports, one data dir
    each under ``directory``), with quick elections (``--heartbeat-interval=50``,
    ``--election-timeout=500``) so a lost leader costs brokers well under a session."""

    def __init__(self, directory: Path, members: int = 3) -> None:
        ports = free_ports(2 * members)
        self.members = [
            EtcdProcess(
                directory / f"etcd{index}",
                ports[2 * index],
                ports[2 * index + 1],
                name=f"etcd{index}",
                extra_arguments=(
                    "--heartbeat-interval=50",
                    "--election-timeout=500",
                    f"--initial-cluster-token=odradek-{directory.name}",
                    "--initial-cluster-state=new",
                ),
            )
            for index in range(members)
        ]
        initial = ",".join(f"{member.name}={member.peer_url}" for member in self.members)
        for member in self.members:
            member.initial_cluster = initial

    @property
    def endpoints(self) -> list[str]:
        """Every member's client URL, for ``etcd.endpoints``."""
        return [member.endpoint for member in self.members]

    def start(self, timeout: float = READY_TIMEOUT_S) -> EtcdCluster:
        for member in self.members:
            member.spawn()
        for member in self.members:
            member.process.wait_ready(member.is_ready, timeout)
        return self

    def leader(self) -> int | None:
        """The index of the member that leads now, as the members answering report it."""
        statuses = {index: _member_status(member) for index, member in enumerate(self.members)}
        answered = {index: status for index, status in statuses.items() if status is not None}
        leaders = {status["leader"] for status in answered.values()}
        return next(
            (i for i, status in answered.items() if status["header"]["member_id"] in leaders),
            None,
        )

    def stop(self) -> None:
        for member in self.members:
            member.stop()

    def kill(self) -> None:
        for member in self.members:
            member.kill()


def _member_status(member: EtcdProcess) -> dict[str, Any] | None:
    """etcd's ``/v3/maintenance/status`` of one member (None if it does not answer)."""
    request = urllib.request.Request(
        f"{member.endpoint}/v3/maintenance/status", data=b"{}", method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=1.0) as response:
            answer: dict[str, Any] = json.load(response)
            return answer
    except (OSError, ValueError):
        return None
