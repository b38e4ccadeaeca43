"""One kubelet on this host: a real node of the tests' cluster (real_node.py).

Several kubelets share the host, so everything a kubelet owns is its own: root
directory, pod logs, ports, the cgroup it parents pods under, the containerd it drives
and its node identity (a client certificate for system:node:<name>, so the Node
authorizer confines it to its own node). This machine's needs: cgroup v1 allowed
(``failCgroupV1: false``), the cgroupfs driver, no swap check, and no negative
oom_score_adj for the kubelet itself (no CAP_SYS_RESOURCE here).
"""

from __future__ import annotations

import json
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
                f"--root-dir={workdir / 'root'}",
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
        """The kubelet only: its pods are containerd's to remove, its mounts and cgroup
        the sweep's (real_node_sweep.py)."""
        self.process.stop()
