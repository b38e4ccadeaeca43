"""kube-proxy for the real nodes: Service IPs (the ``kubernetes`` Service's above all,
which in-cluster clients such as the operator use) translated to endpoints in nftables.

One for the host: all the nodes share its network stack, so one set of rules serves
them all. The sweep (real_node_sweep.py) removes its nftables tables.
"""

from __future__ import annotations

from pathlib import Path

from host_network import POD_NETWORK

from odradek.cli.child_process import ChildProcess, free_ports, http_status

READY_TIMEOUT_S = 60.0


class KubeProxy:
    def __init__(self, workdir: Path, binary: Path, kubeconfig: Path, node: str) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        healthz, metrics = free_ports(2)
        self.healthz = f"http://127.0.0.1:{healthz}/healthz"
        self.process = ChildProcess(
            "kube-proxy",
            [
                str(binary),
                f"--kubeconfig={kubeconfig}",
                "--proxy-mode=nftables",
                f"--cluster-cidr={POD_NETWORK}",
                f"--hostname-override={node}",
                f"--healthz-bind-address=127.0.0.1:{healthz}",
                f"--metrics-bind-address=127.0.0.1:{metrics}",
                "--conntrack-max-per-core=0",
                "--v=1",
            ],
            workdir / "kube-proxy.log",
        )

    def start(self) -> None:
        self.process.start()
        self.process.wait_ready(lambda: http_status(self.healthz) == 200, READY_TIMEOUT_S)

    def stop(self) -> None:
        self.process.stop()
