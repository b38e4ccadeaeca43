"""External listeners: a NodePort Service per broker, and the node ports the API server
gave them, written where the brokers' init step reads them."""

from __future__ import annotations

from ..builders import names
from ..builders.meta import Owner
from ..builders.services import external_port_key, external_ports_config_map, external_service
from ..models import ClusterSpec
from .context import Context


def sync_external_ports(ctx: Context, owner: Owner, spec: ClusterSpec) -> None:
    """Apply the Services of ``spec.replicas`` brokers and record their node ports (those of
    brokers scaled away stay, so a broker that comes back keeps its port)."""
    ports: dict[str, int] = {}
    for listener in spec.external_listeners:
        for broker in range(spec.replicas):
            service = external_service(owner, listener, broker)
            ctx.kube.apply(service)
            name = names.external_service(owner.name, listener.name, broker)
            applied = ctx.kube.get("v1", "Service", name, owner.namespace) or {}
            [port] = applied.get("spec", {}).get("ports") or [{}]
            if "nodePort" in port:
                ports[external_port_key(listener.name, broker)] = int(port["nodePort"])
    ctx.kube.apply(external_ports_config_map(owner, ports))
