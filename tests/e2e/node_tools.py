"""Everything a real node needs, built (or found cached) before the first test runs:
the Kubernetes binaries, CoreDNS and crictl, the pause and etcd images, and the
project's own images. Or the reason it cannot run here."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from real_node import NodeTools

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "tests/e2e"
PROJECT_IMAGES = ("odradek",)
BUILD_TIMEOUT_S = 3600


def _script(*argv: str) -> list[str]:
    """The lines a build script printed on stdout; its stderr (progress) passes through."""
    result = subprocess.run(
        ["bash", *argv], stdout=subprocess.PIPE, text=True, check=False, timeout=BUILD_TIMEOUT_S
    )
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed (exit {result.returncode})")
    return result.stdout.split()


def why_not() -> str | None:
    """None where real nodes can run; else the reason (a container runtime cannot)."""
    if os.geteuid() != 0:
        return "real nodes need root (kubelet, containerd, bridges, mounts)"
    missing = [tool for tool in ("containerd", "runc", "ip", "iptables") if not shutil.which(tool)]
    if missing:
        return f"real nodes need {', '.join(missing)} (scripts/setup.sh installs them)"
    if not Path("/usr/lib/cni/bridge").exists():
        return "real nodes need the CNI plugins (apt-get install containernetworking-plugins)"
    return None


def project_image(name: str) -> str:
    """The tag of the project's image ``name`` (a folder under images/), built if needed."""
    return _script(str(ROOT / "images/build.sh"), name)[-1]


def build_node_tools() -> NodeTools:
    kube = Path(_script(str(HERE / "kube_binaries.sh"))[-1])
    coredns = Path(_script(str(HERE / "go_tool.sh"), "coredns")[-1]) / "coredns"
    crictl = Path(_script(str(HERE / "go_tool.sh"), "crictl")[-1]) / "crictl"
    pause, etcd = _script(str(HERE / "node_images/build.sh"))
    images = _script(str(ROOT / "images/build.sh"), *PROJECT_IMAGES)
    return NodeTools(
        kube=kube,
        coredns=coredns,
        crictl=crictl,
        sandbox_image=pause,
        images=(etcd, *images),
    )
