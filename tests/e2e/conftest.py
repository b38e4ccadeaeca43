"""End-to-end tests against a real Kubernetes cluster (kind, k3d, or any KUBECONFIG).

Skipped with the reason when no cluster answers. Tests that run brokers also need
the odradek image loaded into the cluster, named by ODRADEK_E2E_IMAGE; see
docs/operator.md ("End-to-end tests").
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from e2e_kubectl import Kubectl

ROOT = Path(__file__).resolve().parents[2]


def _reachable() -> str | None:
    """None when `kubectl` reaches an API server, else why not."""
    try:
        result = subprocess.run(
            ["kubectl", "version", "--request-timeout=5s", "-o", "json"],
            capture_output=True,
            text=True,
            timeout=15,
            check=False,
        )
    except (FileNotFoundError, subprocess.TimeoutExpired) as error:
        return f"kubectl unusable: {error}"
    if result.returncode != 0 or '"serverVersion"' not in result.stdout:
        return "no Kubernetes cluster reachable (set KUBECONFIG, e.g. to a kind cluster)"
    return None


@pytest.fixture(scope="session")
def kubectl() -> Kubectl:
    reason = _reachable()
    if reason:
        pytest.skip(reason)
    return Kubectl()


@pytest.fixture(scope="session")
def crds(kubectl: Kubectl) -> None:
    kubectl.run("apply", "--server-side", "--force-conflicts", "-f", str(ROOT / "crds"))
    for plural in ("clusters", "topics", "mirrormakers"):
        kubectl.run(
            "wait", "--for=condition=Established", "--timeout=60s", f"crd/{plural}.odradek.io"
        )


@pytest.fixture
def namespace(kubectl: Kubectl) -> Iterator[str]:
    name = f"odradek-e2e-{uuid.uuid4().hex[:8]}"
    kubectl.run("create", "namespace", name)
    yield name
    kubectl.run("delete", "namespace", name, "--wait=false")


@pytest.fixture(scope="session")
def image() -> str:
    image = os.environ.get("ODRADEK_E2E_IMAGE")
    if not image:
        pytest.skip("ODRADEK_E2E_IMAGE not set: build images/odradek and load it into the cluster")
    return image


@pytest.fixture(scope="session")
def operator(kubectl: Kubectl, image: str) -> Iterator[None]:
    """The chart installed with the image under test; uninstalled afterwards."""
    helm = os.environ.get("HELM", "helm")
    repository, _, tag = image.rpartition(":")
    subprocess.run(
        [
            helm,
            "upgrade",
            "--install",
            "odradek",
            str(ROOT / "charts/odradek"),
            "--namespace",
            "odradek-system",
            "--create-namespace",
            "--wait",
            "--timeout",
            "5m",
            "--set",
            f"image.repository={repository}",
            "--set",
            f"image.tag={tag}",
            "--set",
            "image.pullPolicy=IfNotPresent",
        ],
        check=True,
    )
    yield
    subprocess.run([helm, "uninstall", "odradek", "--namespace", "odradek-system"], check=False)
