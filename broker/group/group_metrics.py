"""Group metrics on ``/metrics``, read from the coordinator at scrape time."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from odradek.broker.group.coordinator import GroupCoordinator
from odradek.broker.group.group_state import GroupState


class GroupCollector(Collector):
    def __init__(self, coordinator: GroupCoordinator) -> None:
        self._coordinator = coordinator

    def collect(self) -> Iterator[Metric]:
        coordinator = self._coordinator
        groups = GaugeMetricFamily(
            "odradek_groups", "Groups this broker coordinates, by state", labels=["state"]
        )
        states = Counter(group.state for group in coordinator.catalog.groups.values())
        for state in GroupState:
            groups.add_metric([state.value], states[state])
        yield groups
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
