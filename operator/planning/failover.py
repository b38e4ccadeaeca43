"""Kubernetes-level failover: a broker stuck on a lost node or a lost volume is replaced."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class NodeHealth:
    ready: bool
    since: datetime
    """When the node's Ready condition last changed."""


@dataclass(frozen=True)
class BrokerPod:
    """Where a broker's pod and its volume are bound."""

    id: int
    node: str | None
    """spec.nodeName of the pod, None while it is not scheduled."""
    volume_node: str | None
    """The node a local PersistentVolume pins the broker to, None for network storage."""
    unschedulable_since: datetime | None = None


@dataclass(frozen=True)
class Replacement:
    """Delete the pod (forcefully) and, when its data is gone with the node, its claim."""

    broker: int
    delete_claim: bool
    reason: str


def plan_failover(
    brokers: Sequence[BrokerPod],
    nodes: Mapping[str, NodeHealth],
    now: datetime,
    grace: timedelta,
) -> Replacement | None:
    """At most one replacement per pass, so two brokers are never rebuilt at once."""
    for broker in sorted(brokers, key=lambda b: b.id):
        replacement = _check(broker, nodes, now, grace)
        if replacement is not None:
            return replacement
    return None


def _check(
    broker: BrokerPod, nodes: Mapping[str, NodeHealth], now: datetime, grace: timedelta
) -> Replacement | None:
    volume_lost = broker.volume_node is not None and _lost(broker.volume_node, nodes, now, grace)
    if broker.node is not None and _lost(broker.node, nodes, now, grace):
        return Replacement(
            broker.id,
            delete_claim=volume_lost,
            reason=f"broker {broker.id}: node {broker.node} {_state(broker.node, nodes)}",
        )
    stuck = broker.unschedulable_since is not None and now - broker.unschedulable_since > grace
    if broker.node is None and stuck and volume_lost:
        return Replacement(
            broker.id,
            delete_claim=True,
            reason=f"broker {broker.id}: its volume is on node {broker.volume_node}, which "
            f"{_state(broker.volume_node or '', nodes)}",
        )
    return None


def _lost(node: str, nodes: Mapping[str, NodeHealth], now: datetime, grace: timedelta) -> bool:
    health = nodes.get(node)
    return health is None or (not health.ready and now - health.since > grace)


def _state(node: str, nodes: Mapping[str, NodeHealth]) -> str:
    health = nodes.get(node)
    if health is None:
        return "no longer exists"
    return f"has not been ready since {health.since.isoformat()}"
