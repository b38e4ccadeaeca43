"""Where replicas go: distinct brokers, distinct racks first, least-loaded brokers first."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Mapping, Sequence


class PlacementError(ValueError):
    """Not enough brokers to hold a partition's replicas."""


def choose_broker(
    current: Sequence[int],
    candidates: Collection[int],
    racks: Mapping[int, str | None],
    load: Counter[int],
) -> int:
    """A broker not in ``current``, on a rack ``current`` does not use if possible."""
    free = [b for b in candidates if b not in current]
    if not free:
        raise PlacementError(f"no broker left besides {sorted(current)}")
    used_racks = {racks.get(b) for b in current} - {None}
    return min(free, key=lambda b: (racks.get(b) in used_racks, load[b], b))


def replace_replicas(
    replicas: Sequence[int],
    leaving: Collection[int],
    candidates: Collection[int],
    racks: Mapping[int, str | None],
    load: Counter[int],
) -> tuple[int, ...]:
    """The replica list with each leaving broker swapped in place; updates ``load``."""
    result = list(replicas)
    for position, broker in enumerate(replicas):
        if broker not in leaving:
            continue
        kept = [b for b in result if b not in leaving]
        chosen = choose_broker(kept, [c for c in candidates if c not in leaving], racks, load)
        result[position] = chosen
        load[broker] -= 1
        load[chosen] += 1
    return tuple(result)


def add_replicas(
    replicas: Sequence[int],
    count: int,
    candidates: Collection[int],
    racks: Mapping[int, str | None],
    load: Counter[int],
) -> tuple[int, ...]:
    """The replica list grown by ``count`` brokers (a replication factor increase)."""
    result = list(replicas)
    for _ in range(count):
        chosen = choose_broker(result, candidates, racks, load)
        result.append(chosen)
        load[chosen] += 1
    return tuple(result)


def resize_replicas(
    replicas: Sequence[int],
    factor: int,
    candidates: Collection[int],
    racks: Mapping[int, str | None],
    load: Counter[int],
) -> tuple[int, ...]:
    """The replica list at a new replication factor; shrinking drops followers from the end."""
    if factor <= len(replicas):
        return tuple(replicas[:factor])
    return add_replicas(replicas, factor - len(replicas), candidates, racks, load)
