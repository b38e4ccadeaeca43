"""The broker's properties file, in Kafka's names."""

from __future__ import annotations

from ..constants import BROKER_DATA_DIR, HTTP_PORT, OPERATOR_MANAGED_KEYS
from ..models import ClusterSpec
from . import names

LOG_DIRS = f"{BROKER_DATA_DIR}/data"


def etcd_endpoints(cluster: str, namespace: str, spec: ClusterSpec) -> list[str]:
    coordination = spec.coordination
    if coordination.external is not None:
        return list(coordination.external.endpoints)
    assert coordination.managed is not None
    return names.etcd_endpoints(cluster, namespace, coordination.managed.replicas)


def broker_properties(cluster: str, namespace: str, spec: ClusterSpec) -> str:
    """Settings shared by every broker; per-pod ones (node.id, ...) come from the environment."""
    managed = {
        "cluster.name": cluster,
        "listeners": ",".join(f"{lst.name}://0.0.0.0:{lst.port}" for lst in spec.listeners),
        "log.dirs": LOG_DIRS,
        "http.listener": f"0.0.0.0:{HTTP_PORT}",
        "etcd.endpoints": ",".join(etcd_endpoints(cluster, namespace, spec)),
    }
    user = {k: _kafka_value(v) for k, v in spec.config.items() if k not in OPERATOR_MANAGED_KEYS}
    lines = [f"{key}={value}" for key, value in {**managed, **dict(sorted(user.items()))}.items()]
    return "\n".join(lines) + "\n"


def _kafka_value(value: str | int | bool | float) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
