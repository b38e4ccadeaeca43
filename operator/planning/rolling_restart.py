"""Which broker to restart next: one at a time, controller last, never below min.insync.replicas."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .partitions import Partition, names


@dataclass(frozen=True)
class Broker:
    """A broker pod as the rolling planner sees it."""

    id: int
    ready: bool
    outdated: bool
    """Its pod runs an older template (image, config) than the StatefulSet's."""


@dataclass(frozen=True)
class Restart:
    broker: int
    reason: str


@dataclass(frozen=True)
class Wait:
    reason: str


@dataclass(frozen=True)
class UpToDate:
    pass


RollDecision = Restart | Wait | UpToDate


def would_fall_below_min_isr(broker: int, partitions: Sequence[Partition]) -> list[Partition]:
    """Partitions whose ISR would drop under min.insync.replicas without this broker."""
    return [p for p in partitions if broker in p.isr and len(p.isr) - 1 < p.min_isr]


def next_restart(
    brokers: Sequence[Broker], partitions: Sequence[Partition], controller: int | None
) -> RollDecision:
    """The next broker to restart, or why none can be restarted now.

    An outdated broker that is not ready goes first: it already serves nothing, so
    restarting it cannot hurt and may be what heals it. Otherwise every broker must be
    ready (its /readyz: all partitions it follows are in sync) before another goes down.
    """
    outdated = [b for b in brokers if b.outdated]
    if not outdated:
        return UpToDate()
    unready_outdated = [b for b in outdated if not b.ready]
    if unready_outdated:
        broker = min(unready_outdated, key=lambda b: b.id)
        return Restart(broker.id, f"broker {broker.id} is not ready and runs an old version")
    unready = sorted(b.id for b in brokers if not b.ready)
    if unready:
        return Wait(f"waiting for broker {_ids(unready)} to be ready before restarting another")
    blocked: list[str] = []
    for broker in sorted(outdated, key=lambda b: (b.id == controller, b.id)):
        at_risk = would_fall_below_min_isr(broker.id, partitions)
        if not at_risk:
            role = " (the controller, last)" if broker.id == controller else ""
            return Restart(broker.id, f"broker {broker.id}{role} runs an old version")
        blocked.append(f"broker {broker.id} would put {names(at_risk)} under min.insync.replicas")
    return Wait("restart deferred: " + "; ".join(blocked))


def _ids(ids: Sequence[int]) -> str:
    return ", ".join(str(i) for i in ids)
