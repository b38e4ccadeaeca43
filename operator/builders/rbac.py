"""The brokers' identity: a ServiceAccount, allowed to read nodes when racks are on."""

from __future__ import annotations

from . import names
from .meta import Obj, Owner, labels, metadata

NODE_READER_ROLE = "odradek-node-reader"
"""ClusterRole shipped by the chart: get nodes, to learn a broker's zone."""
CLUSTER_NAMESPACE_LABEL = "odradek.io/cluster-namespace"


def service_account(owner: Owner) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": metadata(owner, names.service_account(owner.name), "broker"),
        "automountServiceAccountToken": False,
    }


def node_reader_binding(owner: Owner) -> Obj:
    """Cluster-scoped, so it cannot be owned by the Cluster; the resync loop deletes it."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {
            "name": names.node_reader_binding(owner.namespace, owner.name),
            "labels": {
                **labels(owner, "broker"),
                CLUSTER_NAMESPACE_LABEL: owner.namespace,
            },
        },
        "roleRef": {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole",
            "name": NODE_READER_ROLE,
        },
        "subjects": [
            {
                "kind": "ServiceAccount",
                "name": names.service_account(owner.name),
                "namespace": owner.namespace,
            }
        ],
    }
