"""The real nodes' cluster DNS: CoreDNS on the host address, answering from the API.

Its kubernetes plugin serves ``cluster.local`` (Services, and the pods of headless
Services: the names brokers advertise and etcd members find each other by); other
names go to the host's resolvers. Kubelets give pods this address (``clusterDNS``).
"""

from __future__ import annotations

import socket
from pathlib import Path

from odradek.cli.child_process import ChildProcess

READY_TIMEOUT_S = 60.0
DNS_PORT = 53


def _corefile(address: str, kubeconfig: Path) -> str:
    return f"""cluster.local:{DNS_PORT} in-addr.arpa:{DNS_PORT} {{
    bind {address}
    errors
    kubernetes cluster.local in-addr.arpa {{
        kubeconfig {kubeconfig}
        pods insecure
        fallthrough in-addr.arpa
    }}
    cache 5
}}
.:{DNS_PORT} {{
    bind {address}
    errors
    forward . /etc/resolv.conf
}}
"""


class ClusterDns:
    def __init__(self, workdir: Path, binary: Path, address: str, kubeconfig: Path) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        corefile = workdir / "Corefile"
        corefile.write_text(_corefile(address, kubeconfig))
        self.address = address
        self.process = ChildProcess(
            "coredns", [str(binary), "-conf", str(corefile)], workdir / "coredns.log"
        )

    def _answers(self) -> bool:
        """A TCP connection to port 53 is accepted once the server is up."""
        try:
            with socket.create_connection((self.address, DNS_PORT), timeout=1):
                return True
        except OSError:
            return False

    def start(self) -> None:
        self.process.start()
        self.process.wait_ready(self._answers, READY_TIMEOUT_S)

    def stop(self) -> None:
        self.process.stop()
