"""One reconciliation pass over a MirrorMaker: its Deployment, and what it has mirrored."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..builders import names
from ..builders.mirrormaker import bootstrap_for, listener_of, mirror_objects
from ..constants import API_VERSION
from ..models import ClusterSpec, MirrorMakerSpec, MirrorMakerStatus
from ..planning.conditions import Verdict, failed, progressing, ready
from ..planning.mirror_topics import mirrored_topics
from .cluster_address import cluster_admin
from .cluster_sync import owner_of
from .context import Context, Log
from .kafka_admin import KafkaAdminError
from .report import report


def sync_mirror(ctx: Context, body: Mapping[str, Any], logger: Log) -> dict[str, Any]:
    owner = owner_of(body)
    spec = MirrorMakerSpec.model_validate(body["spec"])
    clusters = {
        e.cluster: ctx.kube.get(API_VERSION, "Cluster", e.cluster, owner.namespace)
        for e in (spec.source, spec.target)
        if e.cluster
    }
    missing = [name for name, cluster in clusters.items() if cluster is None]
    if missing:
        message = f"Cluster {', '.join(missing)} does not exist in this namespace"
        return report(ctx, body, failed("ClusterNotFound", message), {}, MirrorMakerStatus, logger)
    specs = {
        name: ClusterSpec.model_validate(cluster.get("spec") or {})
        for name, cluster in clusters.items()
        if cluster is not None
    }
    for endpoint in (spec.source, spec.target):
        if endpoint.cluster and listener_of(specs[endpoint.cluster], endpoint.listener) is None:
            message = f"Cluster {endpoint.cluster} has no listener {endpoint.listener}"
            verdicts = failed("ListenerNotFound", message)
            return report(ctx, body, verdicts, {}, MirrorMakerStatus, logger)
    for obj in mirror_objects(owner, spec, specs):
        ctx.kube.apply(obj)
    deployment = ctx.kube.get("apps/v1", "Deployment", names.mirror(owner.name), owner.namespace)
    replicas = (deployment or {}).get("status", {}).get("replicas") or 0
    ready_replicas = (deployment or {}).get("status", {}).get("readyReplicas") or 0
    fields: dict[str, Any] = {"replicas": replicas, "readyReplicas": ready_replicas}
    try:
        target_cluster = clusters.get(spec.target.cluster) if spec.target.cluster else None
        admin = (
            cluster_admin(ctx, target_cluster)
            if target_cluster is not None
            else ctx.admin(bootstrap_for(spec.target, owner.namespace, None))
        )
        target = admin.describe()
        fields["mirroredTopics"] = mirrored_topics(spec, {p.topic for p in target.partitions})
    except KafkaAdminError:
        pass  # the topic list is informative; readiness comes from the Deployment
    return report(ctx, body, _verdicts(spec, ready_replicas), fields, MirrorMakerStatus, logger)


def _verdicts(spec: MirrorMakerSpec, ready_replicas: int) -> list[Verdict]:
    if ready_replicas >= spec.replicas:
        return ready("Mirroring", f"{ready_replicas} mirror processes ready")
    return progressing("Starting", f"{ready_replicas} of {spec.replicas} mirror processes ready")
