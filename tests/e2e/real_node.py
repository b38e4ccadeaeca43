"""A real Kubernetes cluster on this host: the control plane with a scheduler, and
nodes that run pods in containers.

Each node is a kubelet with its own containerd, bridge and pod subnet, labelled with a
zone; all share the host's network stack, one kube-proxy and one CoreDNS, on a host
address every pod reaches (host_network.py). Storage is static local volumes per node
(local_volumes.py). Images are copied in from Docker. One such cluster per machine at a
time (a lock): the host address, subnets and bridges are the machine's, and all of it
lives in one directory (real_node_sweep.RUN_DIR).

On the way out, whatever failed: kubelets stop, their pods are removed through the CRI
(CNI tears their networks down), then the sweep removes anything left: processes,
mounts, cgroups, rules, links. The sweep also runs first, for a run that was killed.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import cni
import host_network
import local_volumes
from cluster_dns import ClusterDns
from containerd_process import Containerd
from control_plane import ControlPlane, running_control_plane
from e2e_kubectl import Kubectl, wait_for
from kube_proxy import KubeProxy
from kubelet_process import Kubelet
from real_node_sweep import RUN_DIR, sweep

LOCK = RUN_DIR.parent / "lock"
VOLUMES_PER_NODE = 8
"""Local volumes made on each node for the whole session. They are Retained, so a test's
claims use them up: 8 a node covers every Cluster the real-pod tests make (the example's
6 and its scale-up, the mirror's, TLS, Users, load-balancer and zone-failover Clusters)."""
NODE_READY_TIMEOUT_S = 120


@dataclass(frozen=True)
class NodeTools:
    """Where the binaries and images a real cluster needs are."""

    kube: Path
    """kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy"""
    coredns: Path
    crictl: Path
    sandbox_image: str
    images: tuple[str, ...]
    """Copied into every node's containerd."""


@dataclass
class Node:
    name: str
    zone: str
    containerd: Containerd
    kubelet: Kubelet

    def stop(self) -> None:
        """The kubelet, then its pods and containerd: the node is lost to the cluster."""
        for step in (self.kubelet.stop, self.containerd.stop):
            with contextlib.suppress(Exception):
                step()

    def start_again(self) -> None:
        """A stopped node back: containerd on its own root (the images are still there),
        then the kubelet, which starts the pods still bound to the node."""
        self.containerd.start()
        self.kubelet.start()


@dataclass(frozen=True)
class RealCluster:
    kubectl: Kubectl
    plane: ControlPlane
    nodes: tuple[Node, ...]
    resolv_conf: Path
    """Names the cluster DNS: a client on the host resolves Services and pods with it."""
    workdir: Path
    """Where the cluster's processes keep their state; the sweep removes it and stops
    any process started with a path under it."""

    def client_argv(self, argv: Sequence[str]) -> list[str]:
        """``argv`` run on the host with the cluster's DNS as its resolver: a client outside
        the pods that reaches the brokers by the names they advertise. Only its own mount
        namespace sees the cluster's resolv.conf."""
        bind = 'mount --bind "$0" /etc/resolv.conf && exec "$@"'
        return ["unshare", "--mount", "--", "sh", "-c", bind, str(self.resolv_conf), *argv]

    def report(self) -> str:
        """What a person would look at first when pods do not come up: every pod with its
        node and state, the latest events, and the recent log of each container that is
        not ready."""
        run = functools.partial(self.kubectl.run, check=False)
        parts = [run("get", "pods", "-A", "-o", "wide"), _latest_events(run)]
        for pod in self.kubectl.json("get", "pods", "-A")["items"]:
            for status in pod.get("status", {}).get("containerStatuses", []):
                if status["ready"]:
                    continue
                where = ("-n", pod["metadata"]["namespace"], pod["metadata"]["name"])
                for previous in ((), ("--previous",)):
                    log = run("logs", *where, "-c", status["name"], "--tail", "20", *previous)
                    parts.append(f"--- {'/'.join(where[1:])} {status['name']} {previous}\n{log}")
        return "\n".join(parts)


def _node(workdir: Path, plane: ControlPlane, tools: NodeTools, index: int, zone: str) -> Node:
    name = f"node-{index}"
    here = workdir / name
    conf = cni.write_conf(here / "cni", here / "cni-addresses", index)
    containerd = Containerd(here / "containerd", conf, tools.sandbox_image, tools.crictl)
    kubelet = Kubelet(
        here / "kubelet",
        name,
        zone,
        binary=tools.kube / "kubelet",
        server=plane.server,
        pki=plane.pki,
        runtime_endpoint=containerd.endpoint,
        address=host_network.HOST_ADDRESS,
    )
    return Node(name, zone, containerd, kubelet)


def _start(node: Node, tools: NodeTools) -> None:
    node.containerd.start()
    for image in (tools.sandbox_image, *tools.images):
        node.containerd.import_image(image)
    node.kubelet.start()


def _ready_nodes(kubectl: Kubectl, names: Sequence[str]) -> bool:
    ready = {
        node["metadata"]["name"]
        for node in kubectl.json("get", "nodes")["items"]
        for condition in node["status"].get("conditions", [])
        if condition["type"] == "Ready" and condition["status"] == "True"
    }
    return ready >= set(names)


def _latest_events(run: Callable[..., str]) -> str:
    return "\n".join(run("get", "events", "-A", "--sort-by", ".lastTimestamp").splitlines()[-40:])


@contextlib.contextmanager
def _machine_lock() -> Iterator[None]:
    LOCK.parent.mkdir(parents=True, exist_ok=True)
    with LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@contextlib.contextmanager
def running_real_cluster(tools: NodeTools, zones: Sequence[str]) -> Iterator[RealCluster]:
    """A control plane and one node per zone, all Ready; torn down on the way out."""
    bridges = tuple(cni.bridge_name(i) for i in range(1, len(zones) + 1))
    workdir = RUN_DIR
    with _machine_lock(), contextlib.ExitStack() as stack:
        sweep(bridges)
        stack.callback(sweep, bridges)
        workdir.mkdir(parents=True)
        address = host_network.set_up()
        plane = stack.enter_context(running_control_plane(workdir / "plane", tools.kube, address))
        kubectl = Kubectl(plane.kubeconfig)
        dns = ClusterDns(workdir / "dns", tools.coredns, address, plane.kubeconfig)
        stack.callback(dns.stop)
        dns.start()
        nodes = []
        for index, zone in enumerate(zones, start=1):
            node = _node(workdir, plane, tools, index, zone)
            stack.callback(node.stop)
            _start(node, tools)
            nodes.append(node)
        names = [node.name for node in nodes]
        wait_for("nodes Ready", lambda: _ready_nodes(kubectl, names), NODE_READY_TIMEOUT_S, 1)
        proxy = KubeProxy(
            workdir / "kube-proxy", tools.kube / "kube-proxy", plane.kubeconfig, names[0]
        )
        stack.callback(proxy.stop)
        proxy.start()
        volumes = {name: workdir / name / "volumes" for name in names}
        local_volumes.provide(kubectl, volumes, VOLUMES_PER_NODE)
        resolv_conf = workdir / "resolv.conf"
        resolv_conf.write_text(
            f"nameserver {address}\nsearch default.svc.cluster.local svc.cluster.local"
            " cluster.local\noptions ndots:5\n"
        )
        yield RealCluster(kubectl, plane, tuple(nodes), resolv_conf, workdir)
