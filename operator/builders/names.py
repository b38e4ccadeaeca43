"""Deterministic names of a Cluster's objects, so re-run handlers are idempotent."""

from __future__ import annotations

from ..constants import ETCD_CLIENT_PORT


def brokers(cluster: str) -> str:
    """The broker StatefulSet; pods are <cluster>-broker-<id>."""
    return f"{cluster}-broker"


def broker_pod(cluster: str, broker_id: int) -> str:
    return f"{brokers(cluster)}-{broker_id}"


def headless(cluster: str) -> str:
    """The headless Service that gives each broker a stable DNS name."""
    return f"{cluster}-brokers"


def bootstrap(cluster: str) -> str:
    return f"{cluster}-bootstrap"


def config(cluster: str) -> str:
    return f"{cluster}-config"


def service_account(cluster: str) -> str:
    return f"{cluster}-broker"


def node_reader_binding(namespace: str, cluster: str) -> str:
    """Cluster-scoped, so it carries the namespace in its name."""
    return f"odradek-{namespace}-{cluster}-node-reader"


def etcd(cluster: str) -> str:
    """The etcd StatefulSet and its headless Service."""
    return f"{cluster}-etcd"


def etcd_member(cluster: str, index: int) -> str:
    return f"{etcd(cluster)}-{index}"


def etcd_host(cluster: str, namespace: str, index: int) -> str:
    """A member's DNS name under the etcd headless Service."""
    return f"{etcd_member(cluster, index)}.{etcd(cluster)}.{namespace}.svc"


def etcd_endpoints(cluster: str, namespace: str, replicas: int, tls: bool) -> list[str]:
    scheme = "https" if tls else "http"
    return [
        f"{scheme}://{etcd_host(cluster, namespace, i)}:{ETCD_CLIENT_PORT}" for i in range(replicas)
    ]


def etcd_certs(cluster: str) -> str:
    """The Secret with each etcd member's key (<member>.key) and certificate (<member>.crt),
    and ca.crt."""
    return f"{cluster}-etcd-certs"


def external_service(cluster: str, listener: str, broker_id: int) -> str:
    """The NodePort Service of one broker on an external listener."""
    return f"{broker_pod(cluster, broker_id)}-{listener.lower().replace('_', '-')}"


def external_ports(cluster: str) -> str:
    """The ConfigMap of each broker's node port on each external listener (keys
    <LISTENER>.<broker id>), read by the brokers' init step; not part of their config, so a
    new broker's port rolls no other broker."""
    return f"{cluster}-external-ports"


def bootstrap_servers(cluster: str, namespace: str, port: int) -> str:
    return f"{bootstrap(cluster)}.{namespace}.svc:{port}"


def cluster_ca(cluster: str) -> str:
    """The Secret with the cluster CA's key and certificate (the operator's alone)."""
    return f"{cluster}-cluster-ca"


def cluster_ca_cert(cluster: str) -> str:
    """The Secret with the cluster CA's certificate (ca.crt): what clients trust."""
    return f"{cluster}-cluster-ca-cert"


def clients_ca(cluster: str) -> str:
    """The Secret with the clients CA's key and certificate (the operator's alone)."""
    return f"{cluster}-clients-ca"


def clients_ca_cert(cluster: str) -> str:
    """The Secret with the clients CA's certificate (ca.crt): what brokers trust of Users."""
    return f"{cluster}-clients-ca-cert"


def broker_certs(cluster: str) -> str:
    """The Secret with every broker's key and certificate (<pod>.pem) and ca.crt."""
    return f"{cluster}-broker-certs"


def operator_cert(cluster: str) -> str:
    """The Secret with the operator's client certificate for the cluster."""
    return f"{cluster}-operator-cert"


def mirror(name: str) -> str:
    return f"{name}-mirror"
