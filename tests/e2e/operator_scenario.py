"""A namespace where the operator manages one Cluster, and the reads the tests make of it."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from cluster_harness import Cluster as LoopbackCluster
from e2e_kubectl import Kubectl, wait_for
from kubelet_stand_in import KubeletStandIn

from odradek.operator.constants import ADMIN_BOOTSTRAP_ANNOTATION

ROOT = Path(__file__).resolve().parents[2]
CLUSTERS = "clusters.odradek.io"
TOPICS = "topics.odradek.io"
MIRRORMAKERS = "mirrormakers.odradek.io"
NODES = {"node-a": "zone-a", "node-b": "zone-b", "node-c": "zone-c"}
WAIT_S = 90.0


def example(name: str) -> dict[str, Any]:
    """The first document of manifests/examples/<name>.yaml."""
    return dict(next(yaml.safe_load_all((ROOT / f"manifests/examples/{name}.yaml").read_text())))


def pointed_at(resource: dict[str, Any], loopback: LoopbackCluster) -> dict[str, Any]:
    """A Cluster resource whose operator-side admin connections go to ``loopback``."""
    resource = copy.deepcopy(resource)
    annotations = resource["metadata"].setdefault("annotations", {})
    annotations[ADMIN_BOOTSTRAP_ANNOTATION] = loopback.bootstrap
    return resource


def selector(cluster: str, component: str) -> str:
    return f"app.kubernetes.io/instance={cluster},app.kubernetes.io/component={component}"


@dataclass
class Scenario:
    kubectl: Kubectl
    kubelet: KubeletStandIn
    namespace: str
    loopback: LoopbackCluster
    cluster: str = "events"

    def get(self, kind: str, name: str) -> dict[str, Any]:
        found = self.kubectl.get(self.namespace, kind, name)
        assert found is not None, f"{kind} {name} does not exist"
        return found

    def resource(self) -> dict[str, Any]:
        return self.get(CLUSTERS, self.cluster)

    def condition(self, type_: str = "Ready", kind: str = CLUSTERS, name: str = "") -> Any:
        return self.kubectl.condition(self.namespace, kind, name or self.cluster, type_)

    def wait_condition(
        self,
        holds: Callable[[dict[str, Any]], bool],
        what: str,
        type_: str = "Ready",
        kind: str = CLUSTERS,
        name: str = "",
        timeout: float = WAIT_S,
    ) -> dict[str, Any]:
        """The condition ``type_`` once ``holds`` (and it describes the current generation)."""

        seen: list[Any] = [None]

        def probe() -> dict[str, Any] | None:
            obj = self.kubectl.get(self.namespace, kind, name or self.cluster) or {}
            generation = obj.get("metadata", {}).get("generation")
            for condition in obj.get("status", {}).get("conditions", []):
                if condition["type"] == type_ and condition.get("observedGeneration") == generation:
                    seen[0] = condition
                    return dict(condition) if holds(condition) else None
            return None

        try:
            return wait_for(what, probe, timeout=timeout, every=0.5)
        except AssertionError as error:
            raise AssertionError(f"{error}; last {type_} condition: {seen[0]}") from None

    def broker_pods(self) -> dict[int, dict[str, Any]]:
        pods = self.kubectl.items(self.namespace, "pods", selector(self.cluster, "broker"))
        return {int(p["metadata"]["name"].rsplit("-", 1)[1]): p for p in pods}

    def start_brokers(self) -> list[str]:
        return self.kubelet.start_pods(
            self.namespace, selector(self.cluster, "broker"), list(NODES)
        )

    def finish_deletions(self) -> list[str]:
        return self.kubelet.finish_deletions(self.namespace, selector(self.cluster, "broker"))

    def events(self, reason: str) -> list[str]:
        found = self.kubectl.items(self.namespace, "events")
        return [e["message"] for e in found if e.get("reason") == reason]
