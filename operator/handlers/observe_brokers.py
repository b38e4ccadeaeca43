"""Read a Cluster's broker pods, their nodes and volumes into the planners' terms."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..builders import names
from ..builders.meta import Obj, Owner, selector_labels
from ..constants import POD_INDEX_LABEL, REVISION_LABEL
from ..models import ClusterSpec
from ..planning.cluster_health import BrokerView
from ..planning.failover import BrokerPod, NodeHealth
from .kube import Kube

HOSTNAME_LABEL = "kubernetes.io/hostname"


@dataclass(frozen=True)
class BrokerObservation:
    statefulset_replicas: int | None
    """None before the StatefulSet exists."""
    brokers: list[BrokerView]
    placements: list[BrokerPod]
    nodes: dict[str, NodeHealth]
    addresses: dict[int, str]
    """Each scheduled broker's node address (InternalIP): what it advertises externally."""


def observe_brokers(kube: Kube, owner: Owner, spec: ClusterSpec) -> BrokerObservation:
    sts = kube.get("apps/v1", "StatefulSet", names.brokers(owner.name), owner.namespace)
    replicas = sts["spec"]["replicas"] if sts else None
    revision = (sts or {}).get("status", {}).get("updateRevision")
    pods = {
        _ordinal(p): p
        for p in kube.list("v1", "Pod", owner.namespace, selector_labels(owner, "broker"))
    }
    node_objects = {n["metadata"]["name"]: n for n in kube.list("v1", "Node", None, {})}
    topology_key = spec.rack.topology_key if spec.rack else None
    brokers, placements = [], []
    for broker_id in range(replicas if replicas is not None else 0):
        pod = pods.get(broker_id)
        node = pod.get("spec", {}).get("nodeName") if pod else None
        rack = None
        if topology_key and node in node_objects:
            rack = node_objects[node]["metadata"].get("labels", {}).get(topology_key)
        brokers.append(
            BrokerView(
                id=broker_id,
                pod=names.broker_pod(owner.name, broker_id),
                rack=rack,
                ready=pod is not None and _ready(pod),
                outdated=pod is not None
                and revision is not None
                and pod["metadata"].get("labels", {}).get(REVISION_LABEL) != revision,
            )
        )
        if pod is not None:
            placements.append(
                BrokerPod(
                    id=broker_id,
                    node=node,
                    volume_node=_volume_node(kube, owner, broker_id),
                    unschedulable_since=_unschedulable_since(pod),
                )
            )
    nodes = {name: _health(n) for name, n in node_objects.items()}
    addresses = {
        p.id: address
        for p in placements
        if p.node in node_objects and (address := _internal_ip(node_objects[p.node]))
    }
    return BrokerObservation(replicas, brokers, placements, nodes, addresses)


def _internal_ip(node: Obj) -> str | None:
    for address in node.get("status", {}).get("addresses") or []:
        if address.get("type") == "InternalIP":
            return str(address["address"])
    return None


def claim_name(owner: Owner, broker_id: int) -> str:
    return f"data-{names.broker_pod(owner.name, broker_id)}"


def _ordinal(pod: Obj) -> int:
    index = pod["metadata"].get("labels", {}).get(POD_INDEX_LABEL)
    return int(index if index is not None else pod["metadata"]["name"].rsplit("-", 1)[-1])


def _condition(obj: Obj, kind: str) -> dict[str, Any] | None:
    for condition in obj.get("status", {}).get("conditions") or []:
        if condition.get("type") == kind:
            return dict(condition)
    return None


def _ready(pod: Obj) -> bool:
    ready = _condition(pod, "Ready")
    deleting = pod["metadata"].get("deletionTimestamp") is not None
    return not deleting and ready is not None and ready.get("status") == "True"


def _parse_time(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value.replace("Z", "+00:00")) if value else None


def _unschedulable_since(pod: Obj) -> datetime | None:
    scheduled = _condition(pod, "PodScheduled")
    if scheduled and scheduled.get("status") == "False":
        return _parse_time(scheduled.get("lastTransitionTime"))
    return None


def _health(node: Obj) -> NodeHealth:
    ready = _condition(node, "Ready") or {}
    since = _parse_time(ready.get("lastTransitionTime")) or datetime.min.replace(tzinfo=UTC)
    return NodeHealth(ready=ready.get("status") == "True", since=since)


def _volume_node(kube: Kube, owner: Owner, broker_id: int) -> str | None:
    """The node a local volume pins the broker to (from the PV's node affinity)."""
    claim = kube.get("v1", "PersistentVolumeClaim", claim_name(owner, broker_id), owner.namespace)
    volume_name = (claim or {}).get("spec", {}).get("volumeName")
    volume = kube.get("v1", "PersistentVolume", volume_name) if volume_name else None
    terms = (
        (volume or {})
        .get("spec", {})
        .get("nodeAffinity", {})
        .get("required", {})
        .get("nodeSelectorTerms", [])
    )
    for term in terms:
        for expression in term.get("matchExpressions", []):
            if expression.get("key") == HOSTNAME_LABEL and expression.get("values"):
                return str(expression["values"][0])
    return None
