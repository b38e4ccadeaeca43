"""The broker's properties file, in Kafka's names."""

from __future__ import annotations

from ..constants import (
    BROKER_CERTS_DIR,
    BROKER_DATA_DIR,
    CA_CERT_KEY,
    HTTP_PORT,
    OPERATOR_MANAGED_KEYS,
    REPLICATION_LISTENER,
    REPLICATION_PORT,
)
from ..models import ClusterSpec
from . import names

LOG_DIRS = f"{BROKER_DATA_DIR}/data"


def etcd_endpoints(cluster: str, namespace: str, spec: ClusterSpec) -> list[str]:
    coordination = spec.coordination
    if coordination.external is not None:
        return list(coordination.external.endpoints)
    assert coordination.managed is not None
    return names.etcd_endpoints(cluster, namespace, coordination.managed.replicas)


def listeners(spec: ClusterSpec) -> list[tuple[str, int]]:
    """Every listener a broker opens, by name and port: the spec's, and with TLS the
    operator's replication listener."""
    opened = [(listener.name, listener.port) for listener in spec.listeners]
    return [*opened, (REPLICATION_LISTENER, REPLICATION_PORT)] if spec.tls else opened


def broker_properties(cluster: str, namespace: str, spec: ClusterSpec) -> str:
    """Settings shared by every broker; per-pod ones (node.id, ...) come from the environment."""
    managed = {
        "cluster.name": cluster,
        "listeners": ",".join(f"{name}://0.0.0.0:{port}" for name, port in listeners(spec)),
        "log.dirs": LOG_DIRS,
        "http.listener": f"0.0.0.0:{HTTP_PORT}",
        "etcd.endpoints": ",".join(etcd_endpoints(cluster, namespace, spec)),
        **(_tls_properties(spec) if spec.tls else {}),
    }
    user = {k: _kafka_value(v) for k, v in spec.config.items() if k not in OPERATOR_MANAGED_KEYS}
    lines = [f"{key}={value}" for key, value in {**managed, **dict(sorted(user.items()))}.items()]
    return "\n".join(lines) + "\n"


def _kafka_value(value: str | int | bool | float) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _tls_properties(spec: ClusterSpec) -> dict[str, str]:
    """TLS listeners with each broker's certificate (its file named per pod in the
    environment: ``BROKER_KEYSTORE_ENV``), and replication over TLS with client
    certificates: only holders of a cluster CA certificate (brokers, the operator) get in."""
    protocols = {lst.name: "SSL" if lst.tls else "PLAINTEXT" for lst in spec.listeners}
    protocols[REPLICATION_LISTENER] = "SSL"
    return {
        "listener.security.protocol.map": ",".join(f"{k}:{v}" for k, v in protocols.items()),
        "inter.broker.listener.name": REPLICATION_LISTENER,
        "ssl.keystore.type": "PEM",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": f"{BROKER_CERTS_DIR}/{CA_CERT_KEY}",
        f"listener.name.{REPLICATION_LISTENER.lower()}.ssl.client.auth": "required",
    }
