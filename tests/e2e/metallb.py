"""MetalLB's controller for the real nodes: it gives LoadBalancer Services addresses from
an IPAddressPool, as a cloud's load balancer controller would, and kube-proxy (which
sees those addresses in the Services' status) sends their traffic to the pods. It runs
on the host with the admin kubeconfig and no webhook; MetalLB's speaker, which would
announce the addresses to a network, is not needed for clients on the host itself.

Its CRDs and namespace are made for the test and removed afterwards (its pool too)."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path

from e2e_kubectl import Kubectl
from real_node import RealCluster

from odradek.cli.child_process import ChildProcess, free_port, http_status

NAMESPACE = "metallb-system"
READY_TIMEOUT_S = 60.0
BUILD_TIMEOUT_S = 3600
GO_TOOL = Path(__file__).resolve().parent / "go_tool.sh"


def metallb_tool() -> Path:
    """The directory with MetalLB's controller (``metallb``) and its CRDs (``crds/``),
    built from the Go module proxy once."""
    built = subprocess.run(
        ["bash", str(GO_TOOL), "metallb"],
        stdout=subprocess.PIPE, text=True, check=True, timeout=BUILD_TIMEOUT_S,
    )  # fmt: skip
    return Path(built.stdout.split()[-1])


@contextlib.contextmanager
def running_metallb(cluster: RealCluster, pool: str) -> Iterator[None]:
    """MetalLB's controller handing out the addresses of ``pool`` (a CIDR)."""
    tool = metallb_tool()
    kubectl = cluster.kubectl
    crds = sorted((tool / "crds").glob("*.yaml"))
    workdir = cluster.workdir / "metallb"
    workdir.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        for crd in crds:
            kubectl.run("apply", "--server-side", "-f", str(crd))
            stack.callback(kubectl.run, "delete", "-f", str(crd), "--wait=false", check=False)
        for crd in crds:
            kubectl.run("wait", "--for=condition=Established", "-f", str(crd), "--timeout=60s")
        kubectl.run("create", "namespace", NAMESPACE)
        stack.callback(kubectl.run, "delete", "namespace", NAMESPACE, "--wait=false", check=False)
        _apply_pool(kubectl, pool)
        port = free_port()
        process = ChildProcess(
            "metallb-controller",
            [
                str(tool / "metallb"), f"--kubeconfig={cluster.plane.kubeconfig}",
                f"--namespace={NAMESPACE}", "--webhook-mode=disabled", f"--port={port}",
                "--log-level=info",
            ],
            workdir / "controller.log",
        )  # fmt: skip
        stack.callback(process.stop)
        process.start()
        process.wait_ready(
            lambda: http_status(f"http://127.0.0.1:{port}/metrics") == 200, READY_TIMEOUT_S
        )
        yield


def _apply_pool(kubectl: Kubectl, pool: str) -> None:
    document = {
        "apiVersion": "metallb.io/v1beta1",
        "kind": "IPAddressPool",
        "metadata": {"name": "e2e", "namespace": NAMESPACE},
        "spec": {"addresses": [pool]},
    }
    kubectl.apply(NAMESPACE, document)
