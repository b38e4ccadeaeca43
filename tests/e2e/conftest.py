"""End-to-end tests against real Kubernetes components.

The tests on real pods (test_real_pods*.py) get a cluster of their own: a control plane,
a scheduler and one real node per zone (kubelets on containerd, CNI, CoreDNS, local
volumes; real_node.py), with the project's images built and the chart installed with
helm. The custom resource definitions' tests need only an API server: the session starts
a control plane on loopback (etcd, kube-apiserver, kube-controller-manager;
control_plane.py) from binaries kube_binaries.sh builds once from the Go module proxy,
or, with KUBECONFIG set, use that cluster (the real-pod tests then skip: they start
nodes of their own). See docs/operator-testing.md.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))

from chart_install import install_crds
from control_plane import build_binaries, running_control_plane
from e2e_kubectl import Kubectl, new_namespace
from node_tools import build_node_tools, why_not
from real_node import NodeTools, RealCluster, running_real_cluster
from real_pods import CLUSTER, deploy_example, install_operator

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


def _reachable(kubectl: Kubectl) -> str | None:
    """None when kubectl reaches the API server, else why not."""
    try:
        kubectl.json("version", "--request-timeout=5s")
    except (AssertionError, FileNotFoundError, subprocess.SubprocessError) as error:
        return f"the KUBECONFIG cluster is not reachable: {error}"
    return None


@pytest.fixture(scope="session")
def kubectl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    """An API server: the KUBECONFIG cluster, else a control plane of this session's own."""
    if _use_external_cluster():
        external = Kubectl()
        reason = _reachable(external)
        if reason:
            pytest.skip(reason)
        yield external
        return
    binaries = _binaries if _binaries is not None else build_binaries()
    if isinstance(binaries, str):
        pytest.skip(binaries)
    workdir = tmp_path_factory.mktemp("control-plane")
    try:
        with running_control_plane(workdir, binaries) as plane:
            yield Kubectl(plane.kubeconfig)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def crds(kubectl: Kubectl) -> None:
    """The chart's CRDs installed and Established."""
    install_crds(kubectl)


@pytest.fixture
def namespace(kubectl: Kubectl) -> Iterator[str]:
    name = new_namespace(kubectl)
    yield name
    kubectl.run("delete", "namespace", name, "--wait=false")
