"""What the scheduler and kubelets would do, done through the API by the tests.

Nodes are registered with a zone label, Pods are bound to them (the binding
subresource) and marked Running and Ready through the status subresource, and a
deleted Pod's deletion is completed the way a kubelet confirms its containers
stopped. No container ever runs.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import yaml
from e2e_kubectl import Kubectl

ZONE_LABEL = "topology.kubernetes.io/zone"


def _now(minus: timedelta = timedelta()) -> str:
    return (datetime.now(UTC) - minus).strftime("%Y-%m-%dT%H:%M:%SZ")


class KubeletStandIn:
    def __init__(self, kubectl: Kubectl) -> None:
        self.kubectl = kubectl

    def register_node(self, name: str, zone: str) -> None:
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": {ZONE_LABEL: zone, "kubernetes.io/hostname": name},
            },
        }
        self.kubectl.run("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump(node))
        self.set_node_ready(name, "True")

    def set_node_ready(self, name: str, status: str, since: timedelta = timedelta()) -> None:
        """The node's Ready condition, last changed ``since`` ago ("Unknown": node lost)."""
        condition = {
            "type": "Ready",
            "status": status,
            "reason": "KubeletReady" if status == "True" else "NodeStatusUnknown",
            "lastHeartbeatTime": _now(),
            "lastTransitionTime": _now(since),
        }
        self._patch_status("node", name, None, {"status": {"conditions": [condition]}})

    def _patch_status(self, kind: str, name: str, namespace: str | None, patch: Any) -> None:
        where = ["-n", namespace] if namespace else []
        self.kubectl.run(
            "patch", kind, name, *where, "--subresource=status", "--type=strategic",
            "-p", json.dumps(patch),
        )  # fmt: skip

    def pods(self, namespace: str, selector: str) -> list[dict[str, Any]]:
        return self.kubectl.items(namespace, "pods", selector)

    def bind(self, namespace: str, pod: str, node: str) -> None:
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": pod, "namespace": namespace},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        self.kubectl.run("create", "-f", "-", stdin=yaml.safe_dump(binding))

    def mark_ready(self, namespace: str, pod: str) -> None:
        """Running, with every container started and ready."""
        now = _now()
        conditions = [
            {"type": kind, "status": "True", "lastTransitionTime": now}
            for kind in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
        ]
        patch = {
            "status": {
                "phase": "Running",
                "conditions": conditions,
                "podIP": "10.244.0.10",
                "podIPs": [{"ip": "10.244.0.10"}],
                "startTime": now,
            }
        }
        self._patch_status("pod", pod, namespace, patch)

    def finish_deletions(self, namespace: str, selector: str) -> list[str]:
        """Complete the deletion of terminating pods (their containers have stopped)."""
        done = []
        for pod in self.pods(namespace, selector):
            if pod["metadata"].get("deletionTimestamp"):
                name = pod["metadata"]["name"]
                self.kubectl.run(
                    "delete", "pod", name, "-n", namespace, "--grace-period=0", "--force",
                    "--wait=false", check=False,
                )  # fmt: skip
                done.append(name)
        return done

    def start_pods(self, namespace: str, selector: str, nodes: list[str]) -> list[str]:
        """Bind pending pods round-robin over ``nodes`` and mark them Ready; their names."""
        started = []
        for pod in self.pods(namespace, selector):
            meta, spec = pod["metadata"], pod["spec"]
            if meta.get("deletionTimestamp") or _is_ready(pod):
                continue
            if not spec.get("nodeName"):
                self.bind(namespace, meta["name"], nodes[_ordinal(pod) % len(nodes)])
            self.mark_ready(namespace, meta["name"])
            started.append(meta["name"])
        return started


def _ordinal(pod: dict[str, Any]) -> int:
    tail = pod["metadata"]["name"].rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def _is_ready(pod: dict[str, Any]) -> bool:
    return any(
        c["type"] == "Ready" and c["status"] == "True"
        for c in pod.get("status", {}).get("conditions", [])
    )
