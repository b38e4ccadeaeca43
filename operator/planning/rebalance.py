"""Scale-up rebalance: move replicas onto new brokers until loads are even."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .partitions import Partition, replica_load
from .replica_placement import replace_replicas


def plan_rebalance(
    partitions: Sequence[Partition],
    brokers: Sequence[int],
    racks: Mapping[int, str | None],
) -> dict[tuple[str, int], tuple[int, ...]]:
    """New replica lists that move follower replicas from the busiest brokers to the idlest.

    Leaders (first replicas) stay put so clients are not disturbed; each step moves one
    replica and only while it narrows the gap between busiest and idlest by two.
    """
    load = replica_load(partitions, brokers)
    current = {(p.topic, p.index): p.replicas for p in partitions}
    moves: dict[tuple[str, int], tuple[int, ...]] = {}
    while True:
        busiest = max(brokers, key=lambda b: (load[b], -b))
        idlest = min(brokers, key=lambda b: (load[b], b))
        if load[busiest] - load[idlest] < 2:
            return moves
        movable = [
            key
            for key, replicas in sorted(current.items())
            if busiest in replicas[1:] and idlest not in replicas
        ]
        if not movable:
            return moves
        key = movable[0]
        replicas = replace_replicas(current[key], {busiest}, [idlest], racks, load)
        current[key] = moves[key] = replicas
