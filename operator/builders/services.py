"""The broker Services: headless for stable per-broker DNS, bootstrap for clients, and a
NodePort Service per broker and external listener."""

from __future__ import annotations

from ..constants import HTTP_PORT
from ..models import ClusterSpec
from ..models.cluster import Listener
from . import names
from .broker_config import listeners
from .meta import Obj, Owner, metadata, selector_labels


def _ports(spec: ClusterSpec) -> list[Obj]:
    ports = [
        {"name": name.lower().replace("_", "-"), "port": port, "targetPort": port}
        for name, port in listeners(spec)
    ]
    return [*ports, {"name": "http", "port": HTTP_PORT, "targetPort": HTTP_PORT}]


def headless_service(owner: Owner, spec: ClusterSpec) -> Obj:
    """Publishes not-ready brokers too: peers must reach a broker that is still catching up."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(owner, names.headless(owner.name), "broker"),
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": selector_labels(owner, "broker"),
            "ports": _ports(spec),
        },
    }


def bootstrap_service(owner: Owner, spec: ClusterSpec) -> Obj:
    """Clients' first contact; only ready brokers receive connections."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(owner, names.bootstrap(owner.name), "broker"),
        "spec": {
            "type": "ClusterIP",
            "selector": selector_labels(owner, "broker"),
            "ports": _ports(spec),
        },
    }


POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"


def external_service(owner: Owner, listener: Listener, broker: int) -> Obj:
    """The NodePort or LoadBalancer Service of one broker on an external listener,
    selecting its pod. The node port is left to the API server, which keeps it across
    applies, and the address to the load balancer."""
    assert listener.external is not None
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(
            owner, names.external_service(owner.name, listener.name, broker), "broker"
        ),
        "spec": {
            "type": _SERVICE_TYPES[listener.external.type],
            "selector": {POD_NAME_LABEL: names.broker_pod(owner.name, broker)},
            "ports": [
                {
                    "name": listener.name.lower().replace("_", "-"),
                    "port": listener.port,
                    "targetPort": listener.port,
                }
            ],
        },
    }


_SERVICE_TYPES = {"nodeport": "NodePort", "loadbalancer": "LoadBalancer"}


def external_port_key(listener: str, broker_id: int) -> str:
    """A key of the external-ports ConfigMap, and a file where the init step reads it."""
    return f"{listener}.{broker_id}"


def external_ports_config_map(owner: Owner, addresses: dict[str, str]) -> Obj:
    """Where each broker is reached on each external listener: a node port (at its node's
    address), or the ``host:port`` of its load balancer."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": metadata(owner, names.external_ports(owner.name), "broker"),
        "data": dict(sorted(addresses.items())),
    }
