"""Where the operator reaches a Cluster's brokers through the Kafka admin API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..builders import names
from ..constants import ADMIN_BOOTSTRAP_ANNOTATION
from ..models import ClusterSpec


def admin_bootstrap(cluster: Mapping[str, Any], out_of_cluster: bool) -> str:
    """The bootstrap Service, or the Cluster's override when the operator runs outside."""
    meta = cluster["metadata"]
    override = (meta.get("annotations") or {}).get(ADMIN_BOOTSTRAP_ANNOTATION)
    if out_of_cluster and override:
        return str(override)
    spec = ClusterSpec.model_validate(cluster.get("spec") or {})
    return names.bootstrap_servers(meta["name"], meta["namespace"], spec.listeners[0].port)
