"""Node-reader ClusterRoleBindings whose Cluster is gone are deleted by the resync loop.

They are cluster-scoped, so no owner reference lets the garbage collector remove them
with their namespaced Cluster, and Clusters carry no finalizer (it would hold their
namespace in Terminating whenever the operator is not running).
"""

from __future__ import annotations

from ..builders.meta import MANAGED_BY
from ..builders.rbac import CLUSTER_NAMESPACE_LABEL
from ..constants import API_VERSION
from .kube import Kube

RBAC_API = "rbac.authorization.k8s.io/v1"
INSTANCE_LABEL = "app.kubernetes.io/instance"


def prune_node_reader_bindings(kube: Kube, namespaces: tuple[str, ...]) -> list[str]:
    """Delete bindings of Clusters that no longer exist; their names.

    Bindings are listed before Clusters: a binding is made only for an existing
    Cluster, so one made meanwhile always finds its Cluster in the later list.
    """
    bindings = kube.list(
        RBAC_API, "ClusterRoleBinding", None, {"app.kubernetes.io/managed-by": MANAGED_BY}
    )
    live = {
        (c["metadata"]["namespace"], c["metadata"]["name"])
        for namespace in namespaces or (None,)
        for c in kube.list(API_VERSION, "Cluster", namespace, {})
    }
    pruned = []
    for binding in bindings:
        labels = binding["metadata"].get("labels") or {}
        owner = (labels.get(CLUSTER_NAMESPACE_LABEL), labels.get(INSTANCE_LABEL))
        if owner[0] is None or (namespaces and owner[0] not in namespaces) or owner in live:
            continue
        kube.delete(RBAC_API, "ClusterRoleBinding", binding["metadata"]["name"])
        pruned.append(binding["metadata"]["name"])
    return pruned
