"""The managed etcd store: a StatefulSet and the headless Service its members find each other
by. In a secured Cluster, clients and peers speak TLS with certificates of the cluster CA
(each member its own, from the ``<cluster>-etcd-certs`` Secret) and must present one; the
probes then use the plain metrics port, which serves /health and nothing else of etcd's."""

from __future__ import annotations

from ..constants import (
    CA_CERT_KEY,
    DEFAULT_ETCD_IMAGE,
    ETCD_CLIENT_PORT,
    ETCD_METRICS_PORT,
    ETCD_PEER_PORT,
)
from ..models.cluster import ManagedEtcd
from . import names
from .broker_statefulset import volume_claim
from .meta import Obj, Owner, labels, metadata, selector_labels
from .pod_defaults import CONTAINER_SECURITY_CONTEXT, POD_SECURITY_CONTEXT, field_env

DATA_DIR = "/var/lib/etcd"
ETCD_COMPACTION_RETENTION = "1h"
CERTS_DIR = "/etc/etcd/certs"


def etcd_service(owner: Owner) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": metadata(owner, names.etcd(owner.name), "etcd"),
        "spec": {
            "clusterIP": "None",
            "publishNotReadyAddresses": True,
            "selector": selector_labels(owner, "etcd"),
            "ports": [
                {"name": "client", "port": ETCD_CLIENT_PORT},
                {"name": "peer", "port": ETCD_PEER_PORT},
            ],
        },
    }


def etcd_statefulset(owner: Owner, etcd: ManagedEtcd, tls: bool = False) -> Obj:
    name = names.etcd(owner.name)
    domain = f"{name}.{owner.namespace}.svc"
    scheme = "https" if tls else "http"
    members = ",".join(
        f"{name}-{i}={scheme}://{name}-{i}.{domain}:{ETCD_PEER_PORT}" for i in range(etcd.replicas)
    )
    probe_port = "metrics" if tls else "client"
    container: Obj = {
        "name": "etcd",
        "image": etcd.image or DEFAULT_ETCD_IMAGE,
        "command": [
            "etcd",
            "--name=$(POD_NAME)",
            f"--data-dir={DATA_DIR}/data",
            f"--listen-client-urls={scheme}://0.0.0.0:{ETCD_CLIENT_PORT}",
            f"--listen-peer-urls={scheme}://0.0.0.0:{ETCD_PEER_PORT}",
            f"--advertise-client-urls={scheme}://$(POD_NAME).{domain}:{ETCD_CLIENT_PORT}",
            f"--initial-advertise-peer-urls={scheme}://$(POD_NAME).{domain}:{ETCD_PEER_PORT}",
            f"--initial-cluster={members}",
            "--initial-cluster-state=new",
            f"--initial-cluster-token={owner.namespace}-{owner.name}",
            # Old revisions go: brokers whose watch falls behind them read the whole
            # prefix again (docs/cluster.md#etcd-faults).
            "--auto-compaction-mode=periodic",
            f"--auto-compaction-retention={ETCD_COMPACTION_RETENTION}",
            *(_tls_flags() if tls else []),
        ],
        "env": [field_env("POD_NAME", "metadata.name")],
        "ports": [
            {"name": "client", "containerPort": ETCD_CLIENT_PORT},
            {"name": "peer", "containerPort": ETCD_PEER_PORT},
            *([{"name": "metrics", "containerPort": ETCD_METRICS_PORT}] if tls else []),
        ],
        "readinessProbe": {"httpGet": {"path": "/health", "port": probe_port}, "periodSeconds": 5},
        "livenessProbe": {
            "httpGet": {"path": "/health?serializable=true", "port": probe_port},
            "periodSeconds": 10,
            "failureThreshold": 6,
        },
        "securityContext": CONTAINER_SECURITY_CONTEXT,
        "volumeMounts": [
            {"name": "data", "mountPath": DATA_DIR},
            *([{"name": "certs", "mountPath": CERTS_DIR, "readOnly": True}] if tls else []),
        ],
    }
    if etcd.resources is not None:
        container["resources"] = etcd.resources.wire()
    pod: Obj = {
        "automountServiceAccountToken": False,
        "securityContext": POD_SECURITY_CONTEXT,
        "containers": [container],
        "volumes": [],
    }
    if tls:  # readable by the pod's group alone: it holds every member's key
        secret = {"secretName": names.etcd_certs(owner.name), "defaultMode": 0o440}
        pod["volumes"].append({"name": "certs", "secret": secret})
    spec: Obj = {
        "replicas": etcd.replicas,
        "serviceName": name,
        "podManagementPolicy": "Parallel",
        "selector": {"matchLabels": selector_labels(owner, "etcd")},
        "template": {"metadata": {"labels": labels(owner, "etcd")}, "spec": pod},
    }
    if etcd.storage.type == "persistent-claim":
        spec["volumeClaimTemplates"] = [volume_claim(etcd.storage)]
    else:
        pod["volumes"].append({"name": "data", "emptyDir": {"sizeLimit": etcd.storage.size}})
    if not pod["volumes"]:
        del pod["volumes"]
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": metadata(owner, name, "etcd"),
        "spec": spec,
    }


def _tls_flags() -> list[str]:
    """Clients and peers present a certificate of the cluster CA; so does each member."""
    cert, key = f"{CERTS_DIR}/$(POD_NAME).crt", f"{CERTS_DIR}/$(POD_NAME).key"
    trusted = f"{CERTS_DIR}/{CA_CERT_KEY}"
    return [
        f"--cert-file={cert}",
        f"--key-file={key}",
        f"--trusted-ca-file={trusted}",
        "--client-cert-auth",
        f"--peer-cert-file={cert}",
        f"--peer-key-file={key}",
        f"--peer-trusted-ca-file={trusted}",
        "--peer-client-cert-auth",
        f"--listen-metrics-urls=http://0.0.0.0:{ETCD_METRICS_PORT}",
    ]
