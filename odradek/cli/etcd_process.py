"""A single-member etcd on loopback, with its own data dir: the coordination store of a
local cluster (``odradek cluster up``, integration tests); optionally serving its clients
over TLS and requiring their certificates (``EtcdTls``)."""

from __future__ import annotations

import shutil
import ssl
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from odradek.cli.child_process import ChildProcess, ProcessStartError, free_port, http_status

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
    ) -> None:
        self.tls = tls
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

    def command(self) -> list[str]:
        client, peer = self.endpoint, f"http://127.0.0.1:{self.peer_port}"
        return [
            find_etcd(),
            "--name=default",
            f"--data-dir={self.data_dir}",
            f"--listen-client-urls={client}",
            f"--advertise-client-urls={client}",
            f"--listen-peer-urls={peer}",
            f"--initial-advertise-peer-urls={peer}",
            f"--initial-cluster=default={peer}",
            "--listen-metrics-urls=",
            "--log-level=warn",
            "--logger=zap",
            *(self.tls.arguments() if self.tls is not None else []),
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
        self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.process.argv = self.command()
        self.process.start()
        self.process.wait_ready(self.is_ready, timeout)

    def stop(self) -> None:
        self.process.stop()

    def kill(self) -> None:
        self.process.kill()
