"""A Cluster's conditions from what the operator observed and what it is doing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .conditions import Verdict, failed, progressing, ready
from .partitions import Partition, names


@dataclass(frozen=True)
class BrokerView:
    id: int
    pod: str
    rack: str | None
    ready: bool
    outdated: bool


@dataclass(frozen=True)
class Activity:
    """What the operator is in the middle of, or refuses to do, in a sentence."""

    reason: str
    message: str
    refused: bool = False


def cluster_verdicts(
    desired: int,
    brokers: Sequence[BrokerView],
    partitions: Sequence[Partition] | None,
    activity: Activity | None,
) -> list[Verdict]:
    """Ready only when the current spec is fully applied: every broker up to date, in sync."""
    if activity is not None and activity.refused:
        return failed(activity.reason, activity.message)
    lagging = [p for p in partitions or () if p.under_replicated]
    offline = [p for p in partitions or () if not p.isr]
    degraded = ""
    if offline:
        degraded = f"{len(offline)} partitions have no in-sync replica: {names(offline)}"
    elif lagging:
        degraded = f"{len(lagging)} partitions are under-replicated: {names(lagging)}"
    if activity is not None:
        return progressing(activity.reason, activity.message, degraded)
    ready_count = sum(1 for b in brokers if b.ready and not b.outdated)
    if ready_count < desired or len(brokers) != desired:
        message = f"{ready_count} of {desired} brokers ready"
        return progressing("BrokersNotReady", message, degraded)
    if partitions is None:
        return progressing("MetadataUnavailable", "the cluster's metadata could not be read")
    if degraded:
        return progressing("Replicating", degraded, degraded)
    return ready("Reconciled", f"{desired} brokers ready, all partitions in sync")
