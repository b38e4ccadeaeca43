"""The partition facts the planners reason about, as read through the Kafka admin API."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Partition:
    """One partition's replicas (preferred leader first) and in-sync replicas."""

    topic: str
    index: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    min_isr: int = 1

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.index}"

    @property
    def under_replicated(self) -> bool:
        return len(self.isr) < len(self.replicas)


def replica_load(partitions: Iterable[Partition], brokers: Iterable[int]) -> Counter[int]:
    """Replicas per broker, with every given broker present (possibly at zero)."""
    load: Counter[int] = Counter({broker: 0 for broker in brokers})
    for partition in partitions:
        load.update(partition.replicas)
    return load


def names(partitions: Iterable[Partition], limit: int = 5) -> str:
    """A short human list: 'a-0, a-1 and 3 more'."""
    listed = sorted(p.name for p in partitions)
    shown = ", ".join(listed[:limit])
    return shown if len(listed) <= limit else f"{shown} and {len(listed) - limit} more"
