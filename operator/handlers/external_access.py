"""External listeners: a NodePort or LoadBalancer Service per broker, and where each
broker is reached through it, written where the brokers' init step reads it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..builders import names
from ..builders.meta import Owner
from ..builders.services import external_port_key, external_ports_config_map, external_service
from ..models import ClusterSpec
from .context import Context


def sync_external_access(ctx: Context, owner: Owner, spec: ClusterSpec) -> dict[int, list[str]]:
    """Apply the Services of ``spec.replicas`` brokers and record their node ports and
    load balancer addresses (those of brokers scaled away stay, so a broker that comes
    back keeps its port); returns each broker's load balancer hosts (for its
    certificate). A load balancer not given an address yet is recorded on a later pass."""
    reached: dict[str, str] = {}
    hosts: dict[int, list[str]] = {}
    for listener in spec.external_listeners:
        assert listener.external is not None
        for broker in range(spec.replicas):
            ctx.kube.apply(external_service(owner, listener, broker))
            name = names.external_service(owner.name, listener.name, broker)
            applied = ctx.kube.get("v1", "Service", name, owner.namespace) or {}
            key = external_port_key(listener.name, broker)
            if listener.external.type == "loadbalancer":
                host = load_balancer_host(applied)
                if host is not None:
                    reached[key] = (
                        f"[{host}]:{listener.port}" if ":" in host else (f"{host}:{listener.port}")
                    )
                    hosts.setdefault(broker, []).append(host)
                continue
            [port] = applied.get("spec", {}).get("ports") or [{}]
            if "nodePort" in port:
                reached[key] = str(port["nodePort"])
    ctx.kube.apply(external_ports_config_map(owner, reached))
    return hosts


def certificate_addresses(
    spec: ClusterSpec, nodes: Mapping[int, str], load_balancers: Mapping[int, list[str]]
) -> dict[int, list[str]]:
    """Where external clients reach each broker, for its certificate: its node's address
    (with a NodePort listener) and its load balancers'."""
    by_node = any(
        listener.external is not None and listener.external.type == "nodeport"
        for listener in spec.external_listeners
    )
    brokers = set(load_balancers) | (set(nodes) if by_node else set())
    return {
        broker: ([nodes[broker]] if by_node and broker in nodes else [])
        + list(load_balancers.get(broker, []))
        for broker in sorted(brokers)
    }


def load_balancer_host(service: Mapping[str, Any]) -> str | None:
    """The first address a load balancer gave the Service (an IP, else a host name)."""
    for ingress in service.get("status", {}).get("loadBalancer", {}).get("ingress") or []:
        host = ingress.get("ip") or ingress.get("hostname")
        if host:
            return str(host)
    return None
