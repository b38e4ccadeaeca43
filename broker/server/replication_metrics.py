"""Replication gauges and counters, read from the replicas at scrape time."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from odradek.broker.server.context import BrokerContext

if TYPE_CHECKING:
    from odradek.broker.cluster.cluster_membership import ClusterMembership


class ReplicationCollector(Collector):
    def __init__(
        self, context: BrokerContext, membership: Callable[[], ClusterMembership | None]
    ) -> None:
        self._context = context
        self._membership = membership

    def collect(self) -> Iterator[GaugeMetricFamily | CounterMetricFamily]:
        context = self._context
        image = context.store.image
        node_id = context.config.node_id
        leaders = under_replicated = under_min_isr = 0
        lag = GaugeMetricFamily(
            "odradek_follower_lag_records",
            "Records a follower is behind its leader's log end",
            labels=["topic", "partition", "replica"],
        )
        for partition in context.replicas:
            if not partition.is_leader:
                continue
            leaders += 1
            state = partition.state
            topic = image.topics.get(partition.key.topic)
            if topic is None:
                continue
            under_replicated += len(state.isr) < len(state.replicas)
            under_min_isr += len(state.isr) < context.topic_config(topic).get_int(
                "min.insync.replicas"
            )
            for replica, records in partition.follower_lags().items():
                labels = [partition.key.topic, str(partition.key.partition), str(replica)]
                lag.add_metric(labels, records)
        is_controller = image.controller_id == node_id
        offline = sum(
            state.leader < 0 for topic in image.topics.values() for state in topic.partitions
        )
        yield _gauge("odradek_leader_count", "Partitions this broker leads", leaders)
        yield _gauge(
            "odradek_under_replicated_partitions",
            "Partitions led here whose ISR is smaller than their replica set",
            under_replicated,
        )
        yield _gauge(
            "odradek_under_min_isr_partitions",
            "Partitions led here with fewer in-sync replicas than min.insync.replicas",
            under_min_isr,
        )
        yield _gauge(
            "odradek_active_controller", "1 on the broker that is the controller", is_controller
        )
        yield _gauge(
            "odradek_offline_partitions",
            "Partitions without a leader (reported by the controller)",
            offline if is_controller else 0,
        )
        yield lag
        membership = self._membership()
        shrinks = CounterMetricFamily("odradek_isr_shrinks", "ISR shrinks written by this broker")
        expands = CounterMetricFamily(
            "odradek_isr_expands", "ISR expansions written by this broker"
        )
        shrinks.add_metric([], membership.isr_shrinks if membership else 0)
        expands.add_metric([], membership.isr_expands if membership else 0)
        yield shrinks
        yield expands


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, value=value)
