"""Init step of a broker pod: add ``broker.rack`` (the node's zone) to the broker's config.

Runs in the broker image with only the standard library: reads the node
through the API server with the pod's projected token, then writes the
ConfigMap's properties plus ``broker.rack`` where the broker will read them.
"""

from __future__ import annotations

import argparse
import json
import os
import ssl
import sys
import urllib.request
from pathlib import Path

TOKEN_DIR = Path("/var/run/secrets/kubernetes.io/serviceaccount")


def with_rack(properties: str, rack: str | None) -> str:
    """The properties with broker.rack set (or left out when the node has no such label)."""
    lines = [line for line in properties.splitlines() if not line.startswith("broker.rack=")]
    if rack:
        lines.append(f"broker.rack={rack}")
    return "\n".join(lines) + "\n"


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
    parser.add_argument("--node", required=True)
    parser.add_argument("--topology-key", required=True)
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--token-dir", type=Path, default=TOKEN_DIR)
    args = parser.parse_args(argv)
    rack = node_labels(args.node, args.token_dir).get(args.topology_key)
    if rack is None:
        print(f"node {args.node} has no label {args.topology_key}; broker.rack left unset")
    args.out.write_text(with_rack(args.config.read_text(), rack))
    return 0


if __name__ == "__main__":
    sys.exit(main())
