"""One reconciliation pass over a Cluster: scale, apply, fail over, roll, report."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from ..builders import names
from ..builders.cluster import cluster_objects
from ..builders.meta import Obj, Owner, label_selector_string, selector_labels
from ..models import ClusterSpec, ClusterStatus
from ..planning.cluster_health import Activity, cluster_verdicts
from ..planning.conditions import failed
from ..planning.failover import plan_failover
from ..planning.rebalance import plan_rebalance
from ..planning.rolling_restart import Broker, Restart, Wait, next_restart
from ..planning.scale_down import plan_scale_down
from .cluster_address import admin_bootstrap
from .cluster_certificates import MissingCertificateAuthority, sync_certificates
from .context import Context, Log
from .external_access import certificate_addresses, sync_external_access
from .kafka_admin import ClusterMetadata, KafkaAdmin, KafkaAdminError
from .observe_brokers import BrokerObservation, claim_name, observe_brokers
from .report import report


def owner_of(body: Mapping[str, Any]) -> Owner:
    meta = body["metadata"]
    return Owner(body["kind"], meta["name"], meta["namespace"], meta["uid"])


def sync_cluster(ctx: Context, body: Mapping[str, Any], logger: Log) -> Obj:
    """Bring the cluster one step closer to its spec and write what it looks like now."""
    owner = owner_of(body)
    spec = ClusterSpec.model_validate(body.get("spec") or {})
    observed = observe_brokers(ctx.kube, owner, spec)
    bootstrap = names.bootstrap_servers(owner.name, owner.namespace, spec.listeners[0].port)
    every_broker = spec.model_copy(  # every broker there is or is to be
        update={"replicas": max(spec.replicas, observed.statefulset_replicas or 0)}
    )
    external = sync_external_access(ctx, owner, every_broker) if spec.external_listeners else {}
    tls = None
    if spec.secured:
        addresses = certificate_addresses(spec, observed.addresses, external)
        try:
            tls = sync_certificates(ctx, owner, every_broker, logger, addresses)
        except MissingCertificateAuthority as missing:
            verdicts = failed("CertificateAuthorityMissing", str(missing))
            known: Obj = {"bootstrapServers": bootstrap}
            return report(ctx, body, verdicts, known, ClusterStatus, logger)
    admin = ctx.admin(admin_bootstrap(body, ctx.out_of_cluster), tls)
    metadata = _metadata(admin) if observed.statefulset_replicas else None
    replicas, activity = _replicas(admin, spec, observed, metadata)
    for obj in cluster_objects(owner, spec.model_copy(update={"replicas": replicas})):
        ctx.kube.apply(obj)
    replaced = _failover(ctx, owner, spec, observed)
    if activity is None and replaced:
        activity = Activity("BrokerReplaced", replaced)
    if activity is None:
        activity = _roll(ctx, owner, observed, metadata)
    if activity is None and spec.rebalance_on_scale and metadata is not None:
        activity = _rebalance(admin, observed, metadata)
    if replicas != observed.statefulset_replicas:
        # The status describes the StatefulSet this pass applied, not the one it found
        # (else a new Cluster reports "0 of 3 brokers ready" with no brokers listed).
        observed = observe_brokers(ctx.kube, owner, spec)
    previous = (body.get("status") or {}).get("replacedBrokers") or []
    fields = {
        "bootstrapServers": bootstrap,
        "replicas": observed.statefulset_replicas or 0,
        "selector": label_selector_string(selector_labels(owner, "broker")),
        "brokers": [
            {"id": b.id, "pod": b.pod, "rack": b.rack, "ready": b.ready} for b in observed.brokers
        ],
        "controller": metadata.controller if metadata else None,
        "underReplicatedPartitions": (
            sum(p.under_replicated for p in metadata.partitions) if metadata else None
        ),
        "replacedBrokers": ([*previous, f"{ctx.timestamp()} {replaced}"] if replaced else previous)[
            -10:
        ],
    }
    partitions = metadata.partitions if metadata else None
    verdicts = cluster_verdicts(spec.replicas, observed.brokers, partitions, activity)
    return report(ctx, body, verdicts, fields, ClusterStatus, logger)


def _metadata(admin: KafkaAdmin) -> ClusterMetadata | None:
    try:
        return admin.describe()
    except KafkaAdminError:
        return None


def _replicas(
    admin: KafkaAdmin,
    spec: ClusterSpec,
    observed: BrokerObservation,
    metadata: ClusterMetadata | None,
) -> tuple[int, Activity | None]:
    """The StatefulSet size to apply: shrink only once the leaving brokers are empty."""
    current = observed.statefulset_replicas
    if current is None or spec.replicas >= current:
        return spec.replicas, None
    if metadata is None:
        return current, Activity(
            "ScaleDownWaiting", "waiting for the cluster's metadata to plan the drain"
        )
    racks = {b.id: b.rack for b in observed.brokers}
    plan = plan_scale_down(current, spec.replicas, metadata.partitions, racks)
    if plan.shrink:
        return spec.replicas, Activity("ScalingDown", plan.reason)
    if not plan.moves:
        return current, Activity("ScaleDownRefused", plan.reason, refused=True)
    try:
        admin.reassign(plan.moves)
    except KafkaAdminError as error:
        return current, Activity("Draining", f"{plan.reason}; reassignment failed: {error}")
    return current, Activity("Draining", plan.reason)


def _failover(
    ctx: Context, owner: Owner, spec: ClusterSpec, observed: BrokerObservation
) -> str | None:
    if not spec.failover.enabled:
        return None
    grace = timedelta(seconds=spec.failover.grace_period_seconds)
    replacement = plan_failover(observed.placements, observed.nodes, ctx.now(), grace)
    if replacement is None:
        return None
    if replacement.delete_claim:
        ctx.kube.delete(
            "v1", "PersistentVolumeClaim", claim_name(owner, replacement.broker), owner.namespace
        )
    pod = names.broker_pod(owner.name, replacement.broker)
    ctx.kube.delete("v1", "Pod", pod, owner.namespace, grace_seconds=0)
    return replacement.reason


def _roll(
    ctx: Context, owner: Owner, observed: BrokerObservation, metadata: ClusterMetadata | None
) -> Activity | None:
    brokers = [Broker(b.id, b.ready, b.outdated) for b in observed.brokers]
    partitions = metadata.partitions if metadata else ()
    controller = metadata.controller if metadata else None
    decision = next_restart(brokers, partitions, controller)
    if isinstance(decision, Restart) and metadata is None and _is_ready(decision, brokers):
        return Activity("RollingRestart", "waiting for the partition state to restart safely")
    if isinstance(decision, Restart):
        ctx.kube.delete("v1", "Pod", names.broker_pod(owner.name, decision.broker), owner.namespace)
        return Activity("RollingRestart", f"restarting {decision.reason}")
    if isinstance(decision, Wait):
        return Activity("RollingRestart", decision.reason)
    return None


def _is_ready(decision: Restart, brokers: list[Broker]) -> bool:
    return any(b.id == decision.broker and b.ready for b in brokers)


def _rebalance(
    admin: KafkaAdmin, observed: BrokerObservation, metadata: ClusterMetadata
) -> Activity | None:
    """Only on a quiet cluster: an in-flight reassignment shows as under-replicated."""
    if any(p.under_replicated for p in metadata.partitions):
        return None
    racks = {b.id: b.rack for b in observed.brokers}
    moves = plan_rebalance(metadata.partitions, [b.id for b in observed.brokers], racks)
    if not moves:
        return None
    try:
        admin.reassign(moves)
    except KafkaAdminError as error:
        return Activity("Rebalancing", f"rebalance failed: {error}")
    return Activity("Rebalancing", f"moving {len(moves)} partition replicas to even out brokers")
