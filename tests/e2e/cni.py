"""A real node's pod network: one bridge and one /24 of the pod network per node.

The bridge plugin from Debian's containernetworking-plugins (the node's gateway, hairpin
for a pod reaching itself through a Service) with host-local addresses kept in the
node's own directory. Pods talk only to each other and to the host (API server, DNS),
so there is no masquerading and no hostPort: no rules to leave behind.
"""

from __future__ import annotations

import json
from pathlib import Path

BRIDGE_PREFIX = "odr-node"


def bridge_name(index: int) -> str:
    return f"{BRIDGE_PREFIX}{index}"


def subnet(index: int) -> str:
    """Node ``index`` (from 1) gets 10.244.<index>.0/24; 10.244.0.0/24 is the host's."""
    return f"10.244.{index}.0/24"


def write_conf(directory: Path, addresses: Path, index: int) -> Path:
    """The node's CNI configuration directory, written; host-local keeps ``addresses``."""
    directory.mkdir(parents=True, exist_ok=True)
    conf = {
        "cniVersion": "1.0.0",
        "name": f"odradek-e2e-node{index}",
        "plugins": [
            {
                "type": "bridge",
                "bridge": bridge_name(index),
                "isGateway": True,
                "ipMasq": False,
                "hairpinMode": True,
                "ipam": {
                    "type": "host-local",
                    "ranges": [[{"subnet": subnet(index)}]],
                    "routes": [{"dst": "0.0.0.0/0"}],
                    "dataDir": str(addresses),
                },
            },
        ],
    }
    (directory / "10-odradek.conflist").write_text(json.dumps(conf, indent=2))
    return directory
