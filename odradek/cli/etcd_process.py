"""etcd on loopback, each member with its own data dir: the coordination store of a local
cluster (``odradek cluster up``, integration tests). A single member may serve its clients
over TLS and require their certificates (``EtcdTls``); ``EtcdCluster`` runs several
members as one cluster (``odradek cluster up --etcd-members``), so that a member and the
leader can be killed, paused and cut off."""

from __future__ import annotations

import json
import os
import shutil
import ssl
import urllib.request
from collections.abc import Sequence
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
        run_as: int | None = None,
        binary: str | None = None,
    ) -> None:
        """``initial_cluster`` (``name=peer URL,...``) makes it a member of a cluster; alone,
        it is a cluster of one. ``run_as`` runs it under that uid (root only), so that
        firewall rules can single out its traffic; ``binary`` is the etcd to run (the one
        on ``PATH`` by default)."""
        self.tls = tls
        self.run_as = run_as
        self.binary = binary
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
    def endpoints(self) -> list[str]:
        return [self.endpoint]

    @property
    def members(self) -> list[EtcdProcess]:
        """Itself: a cluster of one, like ``EtcdCluster.members``."""
        return [self]

    @property
    def peer_url(self) -> str:
        return f"http://127.0.0.1:{self.peer_port}"

    def command(self) -> list[str]:
        client, peer = self.endpoint, self.peer_url
        uid = self.run_as
        as_user = (
            [] if uid is None else ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups"]
        )
        return [
            *as_user,
            self.binary or find_etcd(),
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
            # Old revisions go: a broker whose watch falls behind them reads the whole
            # prefix again.
            "--auto-compaction-mode=periodic",
            "--auto-compaction-retention=1h",
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
        if self.run_as is not None:
            os.chown(self.data_dir, self.run_as, self.run_as)
        self.process.argv = self.command()
        self.process.start()

    def stop(self) -> None:
        self.process.stop()

    def kill(self) -> None:
        self.process.kill()


class EtcdCluster:
    """``members`` etcd members on loopback forming one cluster (one data dir each under
    ``directory``, ``etcd0``, ``etcd1``...), with quick elections (``--heartbeat-interval=50``,
    ``--election-timeout=500``) so a lost leader costs brokers well under a session."""

    def __init__(
        self,
        directory: Path,
        members: int = 3,
        run_as: Sequence[int] = (),
        binary: str | None = None,
        first_port: int | None = None,
    ) -> None:
        """``run_as``: a uid for each member; ``binary``: see ``EtcdProcess``; ``first_port``:
        member i serves clients on first_port+2i and peers on first_port+2i+1 (free ports
        by default)."""
        ports = (
            free_ports(2 * members)
            if first_port is None
            else list(range(first_port, first_port + 2 * members))
        )
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
                run_as=run_as[index] if run_as else None,
                binary=binary,
            )
            for index in range(members)
        ]
        initial = ",".join(f"{member.name}={member.peer_url}" for member in self.members)
        for member in self.members:
            member.initial_cluster = initial
            member.process.name = f"etcd member {member.name}"

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
        return leader_among(self.endpoints)

    def stop(self) -> None:
        for member in self.members:
            member.stop()

    def kill(self) -> None:
        for member in self.members:
            member.kill()


def leader_among(endpoints: Sequence[str]) -> int | None:
    """The index of the client URL whose etcd member leads now, as the members answering
    report it (None while none knows a leader)."""
    statuses = {index: _member_status(endpoint) for index, endpoint in enumerate(endpoints)}
    answered = {index: status for index, status in statuses.items() if status is not None}
    # A member that knows no leader (cut off, or mid-election) leaves the field out.
    leaders = {status["leader"] for status in answered.values() if status.get("leader")}
    return next(
        (i for i, status in answered.items() if status["header"]["member_id"] in leaders), None
    )


def _member_status(endpoint: str) -> dict[str, Any] | None:
    """etcd's ``/v3/maintenance/status`` of one member (None if it does not answer)."""
    request = urllib.request.Request(f"{endpoint}/v3/maintenance/status", data=b"{}", method="POST")
    try:
        with urllib.request.urlopen(request, timeout=1.0) as response:
            answer: dict[str, Any] = json.load(response)
            return answer
    except (OSError, ValueError):
        return None
