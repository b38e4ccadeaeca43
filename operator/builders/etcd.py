"""The managed etcd store: a StatefulSet and the headless Service its members find each other by."""

from __future__ import annotations

from ..constants import DEFAULT_ETCD_IMAGE, ETCD_CLIENT_PORT, ETCD_PEER_PORT
from ..models.cluster import ManagedEtcd
from . import names
from .broker_statefulset import volume_claim
from .meta import Obj, Owner, labels, metadata, selector_labels
from .pod_defaults import CONTAINER_SECURITY_CONTEXT, POD_SECURITY_CONTEXT, field_env

DATA_DIR = "/var/lib/etcd"


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


def etcd_statefulset(owner: Owner, etcd: ManagedEtcd) -> Obj:
    name = names.etcd(owner.name)
    domain = f"{name}.{owner.namespace}.svc"
    members = ",".join(
        f"{name}-{i}=http://{name}-{i}.{domain}:{ETCD_PEER_PORT}" for i in range(etcd.replicas)
    )
    container: Obj = {
        "name": "etcd",
        "image": etcd.image or DEFAULT_ETCD_IMAGE,
        "command": [
            "etcd",
            "--name=$(POD_NAME)",
            f"--data-dir={DATA_DIR}/data",
            f"--listen-client-urls=http://0.0.0.0:{ETCD_CLIENT_PORT}",
            f"--listen-peer-urls=http://0.0.0.0:{ETCD_PEER_PORT}",
            f"--advertise-client-urls=http://$(POD_NAME).{domain}:{ETCD_CLIENT_PORT}",
            f"--initial-advertise-peer-urls=http://$(POD_NAME).{domain}:{ETCD_PEER_PORT}",
            f"--initial-cluster={members}",
            "--initial-cluster-state=new",
            f"--initial-cluster-token={owner.namespace}-{owner.name}",
        ],
        "env": [field_env("POD_NAME", "metadata.name")],
        "ports": [
            {"name": "client", "containerPort": ETCD_CLIENT_PORT},
            {"name": "peer", "containerPort": ETCD_PEER_PORT},
        ],
        "readinessProbe": {"httpGet": {"path": "/health", "port": "client"}, "periodSeconds": 5},
        "livenessProbe": {
            "httpGet": {"path": "/health?serializable=true", "port": "client"},
            "periodSeconds": 10,
            "failureThreshold": 6,
        },
        "securityContext": CONTAINER_SECURITY_CONTEXT,
        "volumeMounts": [{"name": "data", "mountPath": DATA_DIR}],
    }
    if etcd.resources is not None:
        container["resources"] = etcd.resources.wire()
    pod: Obj = {
        "automountServiceAccountToken": False,
        "securityContext": POD_SECURITY_CONTEXT,
        "containers": [container],
    }
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
        pod["volumes"] = [{"name": "data", "emptyDir": {"sizeLimit": etcd.storage.size}}]
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": metadata(owner, name, "etcd"),
        "spec": spec,
    }
