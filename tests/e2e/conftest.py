"""End-to-end tests against a real Kubernetes API server.

By default the session starts its own control plane on loopback (etcd, kube-apiserver,
kube-controller-manager; control_plane.py), from binaries that kube_binaries.sh builds
once from the Go module proxy. It has no scheduler and no kubelets: tests play their
part through the API (kubelet_stand_in.py). The tests on real pods (test_real_pods*.py)
get a cluster of their own with a scheduler and real nodes (real_node.py), with the
project's images built. With KUBECONFIG set, the tests run against that cluster instead
(kind, k3d, ...); tests that play the kubelet are skipped there, and tests that run
brokers in pods need ODRADEK_E2E_IMAGE. See docs/operator-testing.md.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))

from chart_install import install_without_operator, service_account_token
from cluster_harness import ClusterFactory, cluster_pool, running_etcd
from control_plane import build_binaries, running_control_plane
from e2e_kubectl import Kubectl, new_namespace
from kubeconfig import token_kubeconfig
from kubelet_stand_in import KubeletStandIn
from node_tools import build_node_tools, why_not
from operator_process import running_operator
from real_node import NodeTools, RealCluster, running_real_cluster
from real_pods import CLUSTER, deploy_example, install_operator

ROOT = Path(__file__).resolve().parents[2]
REAL_POD_TESTS = "test_real_pods"
ZONES = ("zone-a", "zone-b", "zone-c")
_binaries: Path | str | None = None
"""Built before the first test (outside its timeout): the directory, or why not."""
_node_tools: NodeTools | str | None = None
"""Likewise for the tests on real pods: binaries and images, or why not."""


def _use_external_cluster() -> bool:
    return bool(os.environ.get("KUBECONFIG"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Build (or find cached) Kubernetes binaries once, before any test's timeout starts."""
    global _binaries
    here = Path(__file__).parent
    wanted = any(here in Path(str(item.path)).parents for item in items)
    if wanted and _binaries is None and not _use_external_cluster():
        try:
            _binaries = build_binaries()
        except (RuntimeError, OSError) as error:
            _binaries = f"Kubernetes binaries could not be built: {error}"
    global _node_tools
    real = any(Path(str(item.path)).stem.startswith(REAL_POD_TESTS) for item in items)
    if real and _node_tools is None and not _use_external_cluster():
        _node_tools = why_not() or build_node_tools()


@pytest.fixture(scope="session")
def real_cluster() -> Iterator[RealCluster]:
    """A cluster of real nodes, one per zone, with the project's images on every node."""
    if _use_external_cluster():
        pytest.skip("starts real nodes of its own: KUBECONFIG unset")
    tools = _node_tools if _node_tools is not None else why_not() or build_node_tools()
    if isinstance(tools, str):
        pytest.skip(tools)
    with running_real_cluster(tools, ZONES) as cluster:
        yield cluster


@pytest.fixture(scope="session")
def operator_pod(real_cluster: RealCluster) -> None:
    """The chart installed with helm on the real cluster: the operator runs as a pod."""
    install_operator(real_cluster)


@pytest.fixture(scope="session")
def events(real_cluster: RealCluster, operator_pod: None) -> str:
    """The example Cluster and Topics Ready on real pods; the Cluster's name."""
    deploy_example(real_cluster)
    return CLUSTER


@dataclass(frozen=True)
class Target:
    kubectl: Kubectl
    local: bool
    """A control plane started by this session (no kubelets), not a KUBECONFIG cluster."""


def _reachable(kubectl: Kubectl) -> str | None:
    """None when kubectl reaches the API server, else why not."""
    try:
        kubectl.json("version", "--request-timeout=5s")
    except (AssertionError, FileNotFoundError, subprocess.SubprocessError) as error:
        return f"the KUBECONFIG cluster is not reachable: {error}"
    return None


@pytest.fixture(scope="session")
def target(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    if _use_external_cluster():
        kubectl = Kubectl()
        reason = _reachable(kubectl)
        if reason:
            pytest.skip(reason)
        yield Target(kubectl, local=False)
        return
    binaries = _binaries if _binaries is not None else build_binaries()
    if isinstance(binaries, str):
        pytest.skip(binaries)
    workdir = tmp_path_factory.mktemp("control-plane")
    try:
        with running_control_plane(workdir, binaries) as plane:
            yield Target(Kubectl(plane.kubeconfig), local=True)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def kubectl(target: Target) -> Kubectl:
    return target.kubectl


@pytest.fixture(scope="session")
def operator_account(kubectl: Kubectl) -> str:
    """The chart's CRDs, RBAC and ServiceAccount installed; the ServiceAccount's name."""
    return install_without_operator(kubectl)


@pytest.fixture(scope="session")
def crds(operator_account: str) -> None:
    """The CRDs are Established (installed from the chart)."""


@pytest.fixture(scope="session")
def operator(
    kubectl: Kubectl, operator_account: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    """The operator running locally with exactly the chart's RBAC (its ServiceAccount token)."""
    workdir = tmp_path_factory.mktemp("operator")
    token = service_account_token(kubectl, operator_account)
    assert kubectl.kubeconfig is not None or _use_external_cluster()
    admin = kubectl.kubeconfig or Path(os.environ["KUBECONFIG"].split(os.pathsep)[0])
    config = token_kubeconfig(admin, workdir / "operator.kubeconfig", "operator", token)
    try:
        with running_operator(config, workdir / "operator.log"):
            yield
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def kubelet(target: Target) -> KubeletStandIn:
    if not target.local:
        pytest.skip("plays the kubelet: needs the session's own control plane (KUBECONFIG unset)")
    return KubeletStandIn(target.kubectl)


@pytest.fixture(scope="session")
def brokers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterFactory]:
    """Odradek clusters on loopback (one etcd); Clusters point the operator at them."""
    workdir = tmp_path_factory.mktemp("brokers")
    with running_etcd(workdir) as etcd, cluster_pool(workdir / "clusters", etcd) as make:
        yield make
    shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture
def namespace(kubectl: Kubectl) -> Iterator[str]:
    name = new_namespace(kubectl)
    yield name
    kubectl.run("delete", "namespace", name, "--wait=false")


@pytest.fixture(scope="session")
def image() -> str:
    image = os.environ.get("ODRADEK_E2E_IMAGE")
    if not image:
        pytest.skip("ODRADEK_E2E_IMAGE not set: build images/odradek and load it into the cluster")
    return image


@pytest.fixture(scope="session")
def chart_operator(target: Target, image: str) -> Iterator[None]:
    """The chart installed with the image under test (a real cluster); uninstalled afterwards."""
    if target.local:
        pytest.skip("runs brokers in pods: needs a real cluster (KUBECONFIG) with the image")
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
