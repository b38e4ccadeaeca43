"""The host side of the real nodes' network: an address for the cluster's services,
forwarding for the pods, and the clean-up of every link and rule the nodes leave.

All nodes share the host's network stack; each has its own bridge and pod subnet
(cni.py). The host address is added to the loopback link (this kernel has no dummy
links), so pods on every bridge reach the API server and the cluster DNS at one
address that no other interface owns. Docker
sets the FORWARD policy to DROP: two rules accept the pod network's traffic.
"""

from __future__ import annotations

import subprocess

POD_NETWORK = "10.244.0.0/16"
HOST_ADDRESS = "10.244.0.1"
"""The API server, cluster DNS and kubelets listen here (on the loopback link)."""
RULE_COMMENT = "odradek-e2e-real-nodes"
FORWARD_RULES = (("-s", POD_NETWORK), ("-d", POD_NETWORK))


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, capture_output=True, text=True, check=False)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {result.stderr.strip()}")
    return result


def _forward_rule(action: str, match: tuple[str, str]) -> list[str]:
    comment = ["-m", "comment", "--comment", RULE_COMMENT]
    return ["iptables", action, "FORWARD", *match, *comment, "-j", "ACCEPT"]


def _has_rule(match: tuple[str, str]) -> bool:
    return _run(*_forward_rule("-C", match), check=False).returncode == 0


def tear_down(bridges: tuple[str, ...]) -> None:
    """Remove the rules, the address and ``bridges`` (what a crashed run may have left)."""
    for match in FORWARD_RULES:
        while _has_rule(match):
            _run(*_forward_rule("-D", match))
    _run("ip", "address", "delete", f"{HOST_ADDRESS}/32", "dev", "lo", check=False)
    for link in bridges:
        _run("ip", "link", "delete", link, check=False)


def set_up() -> str:
    """The host address added and the forwarding rules in place; returns the address."""
    _run("ip", "address", "add", f"{HOST_ADDRESS}/32", "dev", "lo")
    for match in FORWARD_RULES:
        _run(*_forward_rule("-I", match))
    return HOST_ADDRESS
