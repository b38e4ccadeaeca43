"""Which topic-partitions a query reads: ``subscribe``, ``subscribePattern`` or ``assign``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from odradek.spark.offsets import TopicPartition


@dataclass(frozen=True)
class Subscribe:
    """A fixed list of topics; every partition of each, including ones added later."""

    topics: tuple[str, ...]


@dataclass(frozen=True)
class SubscribePattern:
    """Every topic whose whole name matches the regular expression."""

    pattern: str


@dataclass(frozen=True)
class Assign:
    """Exactly these partitions."""

    partitions: tuple[TopicPartition, ...]


Subscription = Subscribe | SubscribePattern | Assign


def select_partitions(
    subscription: Subscription, partition_counts: Mapping[str, int]
) -> list[TopicPartition]:
    """The partitions the subscription selects among the topics that exist now.

    ``partition_counts`` maps each existing topic to its number of partitions. Topics
    that do not exist (yet) select nothing; internal topics (``__*``) only by name.
    """
    if isinstance(subscription, Assign):
        return sorted(
            tp
            for tp in set(subscription.partitions)
            if tp.partition < partition_counts.get(tp.topic, 0)
        )
    if isinstance(subscription, Subscribe):
        topics = [t for t in subscription.topics if t in partition_counts]
    else:
        pattern = re.compile(subscription.pattern)
        topics = [t for t in partition_counts if not t.startswith("__") and pattern.fullmatch(t)]
    return sorted(TopicPartition(t, p) for t in set(topics) for p in range(partition_counts[t]))
