"""One reconciliation pass over a Topic, and its deletion."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..constants import DEFAULT_REPLICATION_FACTOR
from ..models import ClusterSpec, TopicSpec, TopicStatus
from ..planning.conditions import Verdict, failed, progressing, ready
from ..planning.partitions import replica_load
from ..planning.replica_placement import resize_replicas
from ..planning.topic_changes import TopicPlan, plan_topic
from .cluster_address import cluster_admin, cluster_of
from .context import Context, Log
from .kafka_admin import KafkaAdmin, KafkaAdminError
from .report import report

DEFAULT_REPLICAS = 3


def topic_name(body: Mapping[str, Any]) -> str:
    return str((body.get("spec") or {}).get("topicName") or body["metadata"]["name"])


def admin_for(ctx: Context, cluster: Mapping[str, Any]) -> tuple[KafkaAdmin, ClusterSpec]:
    spec = ClusterSpec.model_validate(cluster.get("spec") or {})
    return cluster_admin(ctx, cluster), spec


def sync_topic(ctx: Context, body: Mapping[str, Any], logger: Log) -> dict[str, Any]:
    spec = TopicSpec.model_validate(body["spec"])
    name = topic_name(body)
    fields: dict[str, Any] = {"topicName": name}
    cluster = cluster_of(ctx, body)
    if cluster is None:
        message = f"Cluster {spec.cluster} does not exist in this namespace"
        return report(ctx, body, failed("ClusterNotFound", message), fields, TopicStatus, logger)
    admin, cluster_spec = admin_for(ctx, cluster)
    default = int(cluster_spec.config.get(DEFAULT_REPLICATION_FACTOR, DEFAULT_REPLICAS))
    try:
        plan = plan_topic(spec, admin.topic(name), cluster_spec.replicas, default)
        _apply(admin, name, plan)
        observed = admin.topic(name)
    except KafkaAdminError as error:
        message = f"cluster {spec.cluster} is unavailable: {error}"
        verdicts = progressing("ClusterUnavailable", message)
        return report(ctx, body, verdicts, fields, TopicStatus, logger)
    if observed is not None:
        fields |= {
            "topicId": observed.topic_id,
            "partitions": observed.partitions,
            "replicas": observed.replicas,
        }
    return report(ctx, body, _verdicts(plan), fields, TopicStatus, logger)


def _verdicts(plan: TopicPlan) -> list[Verdict]:
    if plan.refusals:
        return failed("ChangeRefused", "; ".join(plan.refusals))
    if plan.replicas is not None and not plan.create:
        return progressing("Reassigning", f"changing the replication factor to {plan.replicas}")
    return ready("Applied", "the topic matches its resource")


def _apply(admin: KafkaAdmin, name: str, plan: TopicPlan) -> None:
    if plan.create:
        assert plan.partitions is not None and plan.replicas is not None
        admin.create_topic(name, plan.partitions, plan.replicas, plan.set_configs)
        return
    if plan.partitions is not None:
        admin.create_partitions(name, plan.partitions)
    if plan.set_configs or plan.delete_configs:
        admin.alter_configs(name, plan.set_configs, plan.delete_configs)
    if plan.replicas is not None:
        metadata = admin.describe()
        load: Counter[int] = replica_load(metadata.partitions, metadata.brokers)
        moves = {
            (p.topic, p.index): resize_replicas(
                p.replicas, plan.replicas, metadata.brokers, {}, load
            )
            for p in metadata.partitions
            if p.topic == name and len(p.replicas) != plan.replicas
        }
        if moves:
            admin.reassign(moves)


def delete_topic(ctx: Context, body: Mapping[str, Any], logger: Log) -> None:
    """Delete the Kafka topic; never blocks when the cluster is gone or being deleted."""
    cluster = cluster_of(ctx, body)
    name = topic_name(body)
    if cluster is None:
        logger.info("Cluster %s is gone; topic %s goes with it", body["spec"]["cluster"], name)
        return
    admin, _ = admin_for(ctx, cluster)
    if admin.topic(name) is not None:
        admin.delete_topic(name)
