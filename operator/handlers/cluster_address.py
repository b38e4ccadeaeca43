"""Where and how the operator reaches a Cluster's brokers through the Kafka admin API: the
bootstrap Service on the first listener, or with TLS on the replication listener with the
operator's own certificate."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..builders import names
from ..constants import ADMIN_BOOTSTRAP_ANNOTATION, API_VERSION, REPLICATION_PORT
from ..models import ClusterSpec
from .cluster_certificates import operator_tls
from .context import Context
from .kafka_admin import KafkaAdmin


def admin_bootstrap(cluster: Mapping[str, Any], out_of_cluster: bool) -> str:
    """The bootstrap Service, or the Cluster's override when the operator runs outside."""
    meta = cluster["metadata"]
    override = (meta.get("annotations") or {}).get(ADMIN_BOOTSTRAP_ANNOTATION)
    if out_of_cluster and override:
        return str(override)
    spec = ClusterSpec.model_validate(cluster.get("spec") or {})
    port = REPLICATION_PORT if spec.secured else spec.listeners[0].port
    return names.bootstrap_servers(meta["name"], meta["namespace"], port)


def cluster_admin(ctx: Context, cluster: Mapping[str, Any]) -> KafkaAdmin:
    """An admin client for ``cluster``; with TLS, once the operator's certificate exists."""
    spec = ClusterSpec.model_validate(cluster.get("spec") or {})
    tls = operator_tls(ctx, cluster) if spec.secured else None
    return ctx.admin(admin_bootstrap(cluster, ctx.out_of_cluster), tls)


def cluster_of(ctx: Context, body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The Cluster a Topic or User names, or None when it is gone or being deleted."""
    namespace = body["metadata"]["namespace"]
    cluster = ctx.kube.get(API_VERSION, "Cluster", body["spec"]["cluster"], namespace)
    if cluster is None or cluster["metadata"].get("deletionTimestamp"):
        return None
    return cluster
