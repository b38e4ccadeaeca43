"""Scale-down: drain the highest ordinals, shrink the StatefulSet only once they are empty."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from .partitions import Partition, names, replica_load
from .replica_placement import replace_replicas


@dataclass(frozen=True)
class ScaleDownPlan:
    """Either shrink now, or move these replicas first, or refuse with a reason."""

    leaving: tuple[int, ...]
    shrink: bool
    moves: Mapping[tuple[str, int], tuple[int, ...]] = field(default_factory=dict)
    """New replica lists, by (topic, partition), that empty the leaving brokers."""
    reason: str = ""


def plan_scale_down(
    current: int,
    desired: int,
    partitions: Sequence[Partition],
    racks: Mapping[int, str | None],
) -> ScaleDownPlan:
    """StatefulSets remove the highest ordinals, so those are the brokers to drain."""
    leaving = tuple(range(desired, current))
    holding = {b: [p for p in partitions if b in p.replicas] for b in leaving}
    holding = {b: ps for b, ps in holding.items() if ps}
    if not holding:
        return ScaleDownPlan(leaving, shrink=True, reason=f"brokers {_ids(leaving)} are empty")
    staying = range(desired)
    too_wide = [p for p in partitions if len(p.replicas) > desired]
    if too_wide:
        return ScaleDownPlan(
            leaving,
            shrink=False,
            reason=f"cannot scale to {desired} brokers: {names(too_wide)} need "
            f"{max(len(p.replicas) for p in too_wide)} replicas; lower their replicas first",
        )
    load = replica_load(partitions, range(current))
    moves: dict[tuple[str, int], tuple[int, ...]] = {}
    for p in partitions:
        if set(p.replicas) & set(leaving):
            moves[p.topic, p.index] = replace_replicas(p.replicas, leaving, staying, racks, load)
    waiting = "; ".join(f"broker {b} holds {names(ps)}" for b, ps in sorted(holding.items()))
    return ScaleDownPlan(
        leaving, shrink=False, moves=moves, reason=f"draining before scale-down: {waiting}"
    )


def _ids(ids: Sequence[int]) -> str:
    return ", ".join(str(i) for i in ids)
