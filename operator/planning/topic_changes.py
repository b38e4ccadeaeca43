"""What to do to make a Kafka topic match its Topic resource, or why not."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..models import TopicSpec


@dataclass(frozen=True)
class ObservedTopic:
    """The topic as the cluster reports it."""

    topic_id: str
    partitions: int
    replicas: int
    overrides: Mapping[str, str]
    """Topic-level configuration set on the topic (not inherited defaults)."""


@dataclass(frozen=True)
class TopicPlan:
    create: bool = False
    partitions: int | None = None
    """Grow to this many partitions."""
    replicas: int | None = None
    """Change the replication factor to this, by reassignment."""
    set_configs: Mapping[str, str] = field(default_factory=dict)
    delete_configs: tuple[str, ...] = ()
    refusals: tuple[str, ...] = ()

    @property
    def in_sync(self) -> bool:
        return not (
            self.create
            or self.partitions
            or self.replicas
            or self.set_configs
            or self.delete_configs
        )


def kafka_configs(spec: TopicSpec) -> dict[str, str]:
    """The spec's config as Kafka's strings."""
    return {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in spec.config.items()}


def plan_topic(
    spec: TopicSpec,
    observed: ObservedTopic | None,
    brokers: int,
    default_replicas: int,
) -> TopicPlan:
    """The resource is the source of truth; what cannot be done is refused, in a sentence.

    Without spec.replicas a new topic gets the cluster default and an existing one keeps its own.
    """
    if spec.replicas is not None:
        replicas = spec.replicas
    elif observed is not None:
        replicas = observed.replicas
    else:
        replicas = min(default_replicas, brokers)
    refusals: list[str] = []
    if replicas > brokers:
        refusals.append(f"replicas {replicas} exceeds the cluster's {brokers} brokers")
    wanted = kafka_configs(spec)
    if observed is None:
        if refusals:
            return TopicPlan(refusals=tuple(refusals))
        return TopicPlan(
            create=True, partitions=spec.partitions, replicas=replicas, set_configs=wanted
        )
    grow = None
    if spec.partitions < observed.partitions:
        refusals.append(
            f"partitions cannot decrease from {observed.partitions} to {spec.partitions}; "
            f"the topic keeps {observed.partitions}"
        )
    elif spec.partitions > observed.partitions:
        grow = spec.partitions
    change_replicas = None
    if replicas != observed.replicas and replicas <= brokers:
        change_replicas = replicas
    return TopicPlan(
        partitions=grow,
        replicas=change_replicas,
        set_configs={k: v for k, v in wanted.items() if observed.overrides.get(k) != v},
        delete_configs=tuple(sorted(set(observed.overrides) - set(wanted))),
        refusals=tuple(refusals),
    )
