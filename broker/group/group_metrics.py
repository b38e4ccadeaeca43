"""Group metrics on ``/metrics``, read from the coordinator at scrape time."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from odradek.broker.group.consumer_group import ConsumerGroup, ConsumerGroupState
from odradek.broker.group.coordinator import GroupCoordinator
from odradek.broker.group.group import CLASSIC_GROUP_TYPE, Group
from odradek.broker.group.group_state import GroupState
from odradek.broker.group.share_group import ShareGroupState


class GroupCollector(Collector):
    def __init__(self, coordinator: GroupCoordinator) -> None:
        self._coordinator = coordinator

    def collect(self) -> Iterator[Metric]:
        coordinator = self._coordinator
        groups = GaugeMetricFamily(
            "odradek_groups", "Groups this broker coordinates, by state", labels=["state"]
        )
        catalog = coordinator.catalog.groups.values()
        states = Counter(g.state for g in catalog if g.group_type == CLASSIC_GROUP_TYPE)
        for state in GroupState:
            groups.add_metric([state.value], states[state])
        yield groups
        yield from _consumer_group_metrics(catalog)
        yield from _share_group_metrics(catalog)
        yield CounterMetricFamily(
            "odradek_group_rebalances",
            "Rebalances started by groups this broker coordinates",
            value=coordinator.rebalancer.rebalances,
        )
        yield CounterMetricFamily(
            "odradek_offset_commits",
            "Partition offsets committed to groups this broker coordinates",
            value=coordinator.offset_commits,
        )
        lag = GaugeMetricFamily(
            "odradek_consumer_lag",
            "High watermark minus the group's committed offset",
            labels=["group", "topic", "partition"],
        )
        for group_id, topic, partition, value in coordinator.lag_samples():
            lag.add_metric([group_id, topic, str(partition)], value)
        yield lag


def _consumer_group_metrics(groups: Iterable[Group]) -> Iterator[Metric]:
    """KIP-848 groups: how many in each state, and per group its members and epochs."""
    consumer_groups = [(g.group_id, g.consumer) for g in groups if g.consumer is not None]
    by_state = GaugeMetricFamily(
        "odradek_consumer_groups",
        "Consumer groups (KIP-848 protocol) this broker coordinates, by state",
        labels=["state"],
    )
    states = Counter(consumer.state for _, consumer in consumer_groups)
    for state in ConsumerGroupState:
        by_state.add_metric([state.value], states[state])
    yield by_state
    families: dict[str, tuple[str, Callable[[ConsumerGroup], int]]] = {
        "members": ("Members of the consumer group", lambda c: len(c.members)),
        "epoch": ("The consumer group's epoch", lambda c: c.group_epoch),
        "assignment_epoch": ("Epoch of its target assignment", lambda c: c.assignment_epoch),
    }
    for name, (description, value) in families.items():
        family = GaugeMetricFamily(f"odradek_consumer_group_{name}", description, labels=["group"])
        for group_id, consumer in consumer_groups:
            family.add_metric([group_id], value(consumer))
        yield family


def _share_group_metrics(groups: Iterable[Group]) -> Iterator[Metric]:
    """Share groups (KIP-932): how many in each state, and per group its members and epoch."""
    share_groups = [(g.group_id, g.share) for g in groups if g.share is not None]
    by_state = GaugeMetricFamily(
        "odradek_share_groups", "Share groups this broker coordinates, by state", labels=["state"]
    )
    states = Counter(share.state for _, share in share_groups)
    for state in ShareGroupState:
        by_state.add_metric([state.value], states[state])
    yield by_state
    members = GaugeMetricFamily(
        "odradek_share_group_members", "Members of the share group", labels=["group"]
    )
    epoch = GaugeMetricFamily(
        "odradek_share_group_epoch", "The share group's epoch", labels=["group"]
    )
    for group_id, share in share_groups:
        members.add_metric([group_id], len(share.members))
        epoch.add_metric([group_id], share.group_epoch)
    yield members
    yield epoch
