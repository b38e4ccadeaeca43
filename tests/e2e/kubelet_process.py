"""One kubelet on this host: a real node of the tests' cluster (real_node.py).

Several kubelets share the host, so everything a kubelet owns is its own: root
directory, pod logs, ports, the cgroup it parents pods under, the containerd it drives
and its node identity (a client certificate for system:node:<name>, so the Node
authorizer confines it to its own node). This machine's needs: cgroup v1 allowed
(``failCgroupV1: false``), the cgroupfs driver, no swap check, and no negative
oom_score_adj for the kubelet itself (no CAP_SYS_RESOURCE here).
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from pathlib import Path

import pod_cgroups
from kube_pki import Pki, node_client
from kubeconfig import write_kubeconfig

from odradek.cli.child_process import ChildProcess, free_ports

ZONE_LABEL = "topology.kubernetes.io/zone"
CLUSTER_DOMAIN = "cluster.local"


class Kubelet:
    """Node ``name`` in ``zone``; ``start`` returns once the process runs (the Node's
    readiness is the API's to tell)."""

    def __init__(
        self,
        workdir: Path,
        name: str,
        zone: str,
        *,
        binary: Path,
        server: str,
        pki: Pki,
        runtime_endpoint: str,
        address: str,
    ) -> None:
        self.workdir = workdir
        self.name = name
        self.root = workdir / "root"
        self.cgroup = f"odradek-e2e-{name}"
        workdir.mkdir(parents=True, exist_ok=True)
        certificate = node_client(pki, name)
        kubeconfig = write_kubeconfig(
            workdir / "kubelet.kubeconfig", server, pki.ca_cert, user=name, client=certificate
        )
        port, healthz = free_ports(2)
        config = {
            "apiVersion": "kubelet.config.k8s.io/v1beta1",
            "kind": "KubeletConfiguration",
            "failCgroupV1": False,
            "cgroupDriver": "cgroupfs",
            "cgroupRoot": f"/{self.cgroup}",
            "containerRuntimeEndpoint": runtime_endpoint,
            "address": address,
            "port": port,
            "readOnlyPort": 0,
            "healthzBindAddress": "127.0.0.1",
            "healthzPort": healthz,
            "authentication": {
                "anonymous": {"enabled": False},
                "webhook": {"enabled": True},
                "x509": {"clientCAFile": str(pki.ca_cert)},
            },
            "authorization": {"mode": "Webhook"},
            "clusterDNS": [address],
            "clusterDomain": CLUSTER_DOMAIN,
            "failSwapOn": False,
            "oomScoreAdj": 0,
            "podLogsDir": str(workdir / "pod-logs"),
            "volumePluginDir": str(workdir / "volume-plugins"),
            "evictionHard": {"memory.available": "100Mi", "nodefs.available": "1%"},
            "imageGCHighThresholdPercent": 100,
            "imageGCLowThresholdPercent": 99,
            "serializeImagePulls": False,
            "protectKernelDefaults": False,
        }
        config_path = workdir / "kubelet.json"
        config_path.write_text(json.dumps(config, indent=2))
        self.process = ChildProcess(
            f"kubelet {name}",
            [
                str(binary),
                f"--config={config_path}",
                f"--kubeconfig={kubeconfig}",
                f"--root-dir={self.root}",
                f"--hostname-override={name}",
                f"--node-ip={address}",
                f"--node-labels={ZONE_LABEL}={zone}",
                "--v=1",
            ],
            workdir / "kubelet.log",
        )

    def start(self) -> None:
        pod_cgroups.create(self.cgroup)
        self.process.start()

    def stop(self) -> None:
        """The kubelet stopped and its mounts undone; its pods are containerd's to remove,
        and then ``pod_cgroups.remove``."""
        self.process.stop()
        unmount_under(self.root)


def unmount_under(directory: Path) -> None:
    """Unmount whatever is mounted at or below ``directory``, deepest first."""
    prefix = str(directory)
    with open("/proc/self/mountinfo") as mountinfo:
        points = [line.split()[4] for line in mountinfo]
    for point in sorted((p for p in points if p.startswith(prefix)), key=len, reverse=True):
        with contextlib.suppress(subprocess.SubprocessError):
            subprocess.run(["umount", "--lazy", point], capture_output=True, check=False)
