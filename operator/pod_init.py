"""Init step of a broker pod: complete the broker's config with what only its node tells.

Runs in the broker image with only the standard library. With racks, it reads the node
through the API server with the pod's projected token and adds ``broker.rack`` (the
node's zone). With external listeners, it writes ``advertised.listeners``: the in-cluster
ones as given, and each external one as the external-ports ConfigMap says: this broker's
node port at the node's address, or its load balancer's ``host:port`` (waited for while
the load balancer has given none). The ConfigMap's properties plus these go where the
broker will read them.
"""

from __future__ import annotations

import argparse
import json
import os
import ssl
import sys
import time
import urllib.request
from pathlib import Path

TOKEN_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


def with_rack(properties: str, rack: str | None) -> str:
    """The properties with broker.rack set (or left out when the node has no such label)."""
    lines = [line for line in properties.splitlines() if not line.startswith("broker.rack=")]
    if rack:
        lines.append(f"broker.rack={rack}")
    return "\n".join(lines) + "\n"


def with_advertised(properties: str, advertised: str) -> str:
    """The properties with advertised.listeners set to ``advertised``."""
    prefix = "advertised.listeners="
    lines = [line for line in properties.splitlines() if not line.startswith(prefix)]
    return "\n".join([*lines, prefix + advertised]) + "\n"


def external_advertised(
    names: list[str], host: str, broker: str, ports: Path, wait_s: float = 0.0
) -> list[str]:
    """``NAME://host:port`` of each external listener from this broker's key
    ``NAME.<broker>`` of the mounted external-ports ConfigMap: a node port (at ``host``),
    or a load balancer's ``host:port``. A missing key is waited for up to ``wait_s`` (the
    kubelet refreshes the mounted ConfigMap when the operator adds it)."""
    found = []
    deadline = time.monotonic() + wait_s
    for name in names:
        key = ports / f"{name}.{broker}"
        if not key.exists() and wait_s > 0:
            print(f"waiting for the external address of listener {name} of broker {broker}")
            while not key.exists() and time.monotonic() < deadline:
                time.sleep(1)
        try:
            value = key.read_text().strip()
        except OSError as error:
            raise SystemExit(
                f"no external address for listener {name} of broker {broker}: {error}"
            ) from None
        if ":" in value:
            found.append(f"{name}://{value}")
        elif value.isdigit():
            found.append(f"{name}://{host}:{value}")
        else:
            raise SystemExit(f"external address {value!r} of listener {name} is no port")
    return found


def node_labels(node: str, token_dir: Path = TOKEN_DIR) -> dict[str, str]:
    """The node's labels, read with the pod's token from the API server the pod is told of."""
    host = os.environ["KUBERNETES_SERVICE_HOST"]
    port = os.environ.get("KUBERNETES_SERVICE_PORT", "443")
    request = urllib.request.Request(
        f"https://{host}:{port}/api/v1/nodes/{node}",
        headers={"Authorization": f"Bearer {(token_dir / 'token').read_text().strip()}"},
    )
    context = ssl.create_default_context(cafile=str(token_dir / "ca.crt"))
    with urllib.request.urlopen(request, context=context, timeout=10) as response:
        labels: dict[str, str] = json.load(response)["metadata"].get("labels", {})
    return labels


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m odradek.operator.pod_init")
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--node", help="with --topology-key: add broker.rack")
    parser.add_argument("--topology-key")
    parser.add_argument("--token-dir", type=Path, default=TOKEN_DIR)
    parser.add_argument("--advertised", help="the in-cluster advertised listeners")
    parser.add_argument("--host", help="the node's address, for external listeners")
    parser.add_argument("--broker", help="this broker's id")
    parser.add_argument("--external-ports", type=Path, help="the external-ports ConfigMap")
    parser.add_argument("--external", action="append", default=[], help="an external listener")
    parser.add_argument(
        "--wait", type=float, default=0.0, help="seconds to wait for a missing external address"
    )
    args = parser.parse_args(argv)
    properties = args.config.read_text()
    if args.node and args.topology_key:
        rack = node_labels(args.node, args.token_dir).get(args.topology_key)
        if rack is None:
            print(f"node {args.node} has no label {args.topology_key}; broker.rack left unset")
        properties = with_rack(properties, rack)
    if args.external:
        if not (args.advertised and args.host and args.broker and args.external_ports):
            parser.error("--external needs --advertised, --host, --broker and --external-ports")
        external = external_advertised(
            args.external, args.host, args.broker, args.external_ports, args.wait
        )
        advertised = ",".join([args.advertised, *external])
        print(f"broker {args.broker} advertises {advertised}")
        properties = with_advertised(properties, advertised)
    args.out.write_text(properties)
    return 0


if __name__ == "__main__":
    sys.exit(main())
