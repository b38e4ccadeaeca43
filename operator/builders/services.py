"""The broker Services: headless for stable per-broker DNS, bootstrap for clients."""

from __future__ import annotations

from ..constants import HTTP_PORT
from ..models import ClusterSpec
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
