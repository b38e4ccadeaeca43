"""A Kubernetes control plane: etcd, kube-apiserver, kube-controller-manager and, for
real nodes, kube-scheduler.

Without real nodes it listens on loopback, with no scheduler and no node lifecycle (the
custom resource definitions' tests need the API server alone). For real nodes
(real_node.py) it listens on the host address pods reach, publishes it as the
``kubernetes`` Service's endpoint, schedules, and runs the node lifecycle controller.
"""

from __future__ import annotations

import contextlib
import ssl
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from kube_pki import Pki, make_pki
from kubeconfig import write_kubeconfig

from odradek.cli.child_process import ChildProcess, free_port, wait_until
from odradek.cli.etcd_process import EtcdProcess

ROOT = Path(__file__).resolve().parents[2]
BINARIES_SCRIPT = ROOT / "tests/e2e/kube_binaries.sh"
READY_TIMEOUT_S = 120.0
ISSUER = "https://kubernetes.default.svc.cluster.local"
CONTROLLERS = (
    "serviceaccount-controller",
    "serviceaccount-token-controller",
    "root-ca-certificate-publisher-controller",
    "namespace-controller",
    "garbage-collector-controller",
    "statefulset-controller",
    "deployment-controller",
    "replicaset-controller",
    "disruption-controller",
    "persistentvolume-binder-controller",
    "persistentvolumeclaim-protection-controller",
    "persistentvolume-protection-controller",
    "endpointslice-controller",
)
"""Enough for the operator's objects; no node lifecycle (it would evict the kubelet-less pods)."""
NODE_CONTROLLERS = (
    "node-lifecycle-controller",
    "pod-garbage-collector-controller",
    "ttl-after-finished-controller",
    "job-controller",
)
"""Added for real nodes: NotReady nodes tainted and their pods evicted, orphans collected."""
SERVICE_IP_RANGE = "10.96.0.0/24"
KUBERNETES_SERVICE_IP = "10.96.0.1"


def build_binaries() -> Path:
    """The directory with kube-apiserver and kube-controller-manager (built once, cached)."""
    result = subprocess.run(
        ["bash", str(BINARIES_SCRIPT)], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(result.stderr.strip()[-2000:] or "kube_binaries.sh failed")
    return Path(result.stdout.strip().splitlines()[-1])


class ControlPlane:
    """Start with ``running_control_plane``; ``kubeconfig`` is the admin's (system:masters)."""

    def __init__(self, workdir: Path, binaries: Path, node_address: str | None = None) -> None:
        """``node_address``: a host address pods reach; given, the plane serves real nodes."""
        self.workdir = workdir
        self.binaries = binaries
        self.node_address = node_address
        self.address = node_address or "127.0.0.1"
        extra = (node_address, KUBERNETES_SERVICE_IP) if node_address else ()
        self.pki: Pki = make_pki(workdir / "pki", extra)
        self.port = free_port()
        self.server = f"https://{self.address}:{self.port}"
        self.kubeconfig = write_kubeconfig(
            workdir / "admin.kubeconfig",
            self.server,
            self.pki.ca_cert,
            user="admin",
            client=(self.pki.admin_cert, self.pki.admin_key),
        )
        self.etcd = EtcdProcess(workdir / "etcd")
        self.apiserver = ChildProcess("kube-apiserver", [], workdir / "kube-apiserver.log")
        self.controllers = ChildProcess(
            "kube-controller-manager", [], workdir / "kube-controller-manager.log"
        )
        self.scheduler = ChildProcess("kube-scheduler", [], workdir / "kube-scheduler.log")

    def apiserver_argv(self) -> list[str]:
        pki = self.pki
        if self.node_address:
            nodes = [
                f"--kubelet-client-certificate={pki.admin_cert}",
                f"--kubelet-client-key={pki.admin_key}",
                "--kubelet-preferred-address-types=InternalIP",
            ]
        else:
            nodes = ["--endpoint-reconciler-type=none"]
        return [
            str(self.binaries / "kube-apiserver"),
            f"--etcd-servers={self.etcd.endpoint}",
            f"--bind-address={self.address}",
            f"--advertise-address={self.address}",
            f"--secure-port={self.port}",
            f"--tls-cert-file={pki.serving_cert}",
            f"--tls-private-key-file={pki.serving_key}",
            f"--client-ca-file={pki.ca_cert}",
            f"--service-account-issuer={ISSUER}",
            f"--service-account-key-file={pki.service_account_key}",
            f"--service-account-signing-key-file={pki.service_account_key}",
            "--authorization-mode=Node,RBAC",
            f"--service-cluster-ip-range={SERVICE_IP_RANGE}",
            *nodes,
            "--allow-privileged=true",
            "--profiling=false",
            "--v=1",
        ]

    def _component_flags(self) -> list[str]:
        """What the controller manager and the scheduler share: the admin's identity,
        a loopback port of their own, no leader election."""
        return [
            f"--kubeconfig={self.kubeconfig}",
            f"--authentication-kubeconfig={self.kubeconfig}",
            f"--authorization-kubeconfig={self.kubeconfig}",
            "--bind-address=127.0.0.1",
            f"--secure-port={free_port()}",
            "--leader-elect=false",
        ]

    def controllers_argv(self) -> list[str]:
        return [
            str(self.binaries / "kube-controller-manager"),
            *self._component_flags(),
            f"--controllers={','.join(self.controller_names())}",
            f"--service-account-private-key-file={self.pki.service_account_key}",
            f"--root-ca-file={self.pki.ca_cert}",
            "--v=1",
        ]

    def controller_names(self) -> tuple[str, ...]:
        return CONTROLLERS + (NODE_CONTROLLERS if self.node_address else ())

    def scheduler_argv(self) -> list[str]:
        return [
            str(self.binaries / "kube-scheduler"),
            *self._component_flags(),
            "--v=1",
        ]

    def _ready(self) -> bool:
        context = ssl.create_default_context(cafile=str(self.pki.ca_cert))
        context.load_cert_chain(str(self.pki.admin_cert), str(self.pki.admin_key))
        try:
            with urllib.request.urlopen(f"{self.server}/readyz", context=context, timeout=2) as r:
                return bool(r.status == 200)
        except (urllib.error.URLError, OSError):
            return False

    def start(self) -> ControlPlane:
        self.etcd.start()
        self.apiserver.argv = self.apiserver_argv()
        self.apiserver.start()
        self.apiserver.wait_ready(self._ready, READY_TIMEOUT_S)
        self.controllers.argv = self.controllers_argv()
        self.controllers.start()
        wait_until(self._has_default_service_account, READY_TIMEOUT_S, "default ServiceAccount")
        if self.node_address:
            self.scheduler.argv = self.scheduler_argv()
            self.scheduler.start()
        return self

    def _has_default_service_account(self) -> bool:
        if not self.controllers.is_running():
            raise RuntimeError(f"kube-controller-manager exited\n{self.controllers.log_tail()}")
        found = subprocess.run(
            ["kubectl", "--kubeconfig", str(self.kubeconfig), "get", "serviceaccount", "default"],
            capture_output=True,
            check=False,
        )
        return found.returncode == 0

    def stop(self) -> None:
        """Controllers first, etcd last; each stop is attempted whatever happened before."""
        for process in (self.scheduler, self.controllers, self.apiserver):
            with contextlib.suppress(Exception):
                process.stop()
        self.etcd.stop()


@contextlib.contextmanager
def running_control_plane(
    workdir: Path, binaries: Path, node_address: str | None = None
) -> Iterator[ControlPlane]:
    plane = ControlPlane(workdir, binaries, node_address)
    try:
        yield plane.start()
    finally:
        plane.stop()
