from __future__ import annotations

from typing import Any

from odradek.operator.models import TopicSpec
from odradek.operator.planning.topic_changes import ObservedTopic, plan_topic


def spec(**fields: Any) -> TopicSpec:
    return TopicSpec.model_validate({"cluster": "c", **fields})


def observed(partitions: int = 3, replicas: int = 3, **overrides: str) -> ObservedTopic:
    return ObservedTopic("id", partitions, replicas, overrides)


def test_a_missing_topic_is_created_with_the_cluster_default_replication() -> None:
    plan = plan_topic(spec(partitions=6, config={"cleanup.policy": "compact"}), None, 3, 3)
    assert plan.create and plan.partitions == 6 and plan.replicas == 3
    assert plan.set_configs == {"cleanup.policy": "compact"}


def test_a_matching_topic_needs_nothing() -> None:
    plan = plan_topic(
        spec(partitions=3, config={"retention.ms": 1000}),
        observed(**{"retention.ms": "1000"}),
        3,
        3,
    )
    assert plan.in_sync and not plan.refusals


def test_partitions_grow_but_never_shrink() -> None:
    assert plan_topic(spec(partitions=6), observed(), 3, 3).partitions == 6
    plan = plan_topic(spec(partitions=2), observed(), 3, 3)
    assert plan.partitions is None
    assert plan.refusals == ("partitions cannot decrease from 3 to 2; the topic keeps 3",)


def test_config_follows_the_resource_one_way() -> None:
    plan = plan_topic(
        spec(partitions=3, config={"retention.ms": 5, "compression.type": "zstd"}),
        observed(**{"retention.ms": "1", "segment.ms": "9"}),
        3,
        3,
    )
    assert plan.set_configs == {"retention.ms": "5", "compression.type": "zstd"}
    assert plan.delete_configs == ("segment.ms",)


def test_quoted_boolean_configs_are_passed_on_as_kafka_writes_them() -> None:
    plan = plan_topic(spec(config={"unclean.leader.election.enable": "true"}), None, 1, 1)
    assert plan.set_configs == {"unclean.leader.election.enable": "true"}


def test_replication_changes_by_reassignment_within_the_broker_count() -> None:
    assert plan_topic(spec(partitions=3, replicas=2), observed(), 3, 3).replicas == 2
    refused = plan_topic(spec(partitions=3, replicas=5), observed(), 3, 3)
    assert refused.replicas is None
    assert refused.refusals == ("replicas 5 exceeds the cluster's 3 brokers",)


def test_an_existing_topic_without_replicas_in_spec_keeps_its_own() -> None:
    assert plan_topic(spec(partitions=3), observed(replicas=2), 3, 3).in_sync


def test_too_many_replicas_for_a_new_topic_creates_nothing() -> None:
    plan = plan_topic(spec(replicas=4), None, 3, 3)
    assert not plan.create and plan.refusals
