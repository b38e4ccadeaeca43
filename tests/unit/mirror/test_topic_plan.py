from __future__ import annotations

from odradek.mirror.topic_sync import TopicChange, TopicShape, plan_topic


def test_a_missing_target_topic_is_created_like_the_source_with_allow_listed_configs() -> None:
    source = TopicShape(6, {"retention.ms": "1000", "min.insync.replicas": "2"})
    assert plan_topic(source, None) == TopicChange(True, 6, {"retention.ms": "1000"})


def test_partitions_added_on_the_source_are_added_on_the_target() -> None:
    assert plan_topic(TopicShape(8), TopicShape(6)) == TopicChange(False, 8, {})


def test_partitions_are_never_removed_and_an_equal_topic_needs_nothing() -> None:
    assert plan_topic(TopicShape(4), TopicShape(6)) is None
    same = TopicShape(3, {"cleanup.policy": "compact"})
    assert plan_topic(same, same) is None


def test_only_changed_allow_listed_configs_are_altered() -> None:
    source = TopicShape(3, {"cleanup.policy": "compact", "retention.ms": "5", "x.custom": "1"})
    target = TopicShape(3, {"cleanup.policy": "compact", "retention.ms": "9"})
    assert plan_topic(source, target) == TopicChange(False, None, {"retention.ms": "5"})
