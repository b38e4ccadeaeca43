"""Share-group metrics on ``/metrics``, read from the share-partitions at scrape time."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from odradek.broker.share.share_broker import ShareBroker
from odradek.broker.share.share_state import DeliveryState


class ShareCollector(Collector):
    def __init__(self, shares: ShareBroker) -> None:
        self._shares = shares

    def collect(self) -> Iterator[Metric]:
        labels = ["group", "topic", "partition"]
        records = GaugeMetricFamily(
            "odradek_share_partition_records",
            "In-flight records of the share-partitions this broker leads, by delivery state",
            labels=[*labels, "state"],
        )
        start = GaugeMetricFamily(
            "odradek_share_partition_start_offset",
            "The share-partition start offset (every record below it is done with)",
            labels=labels,
        )
        for key, topic, share in self._shares.partitions.hosted():
            names = [key.group_id, topic, str(key.partition)]
            for state in DeliveryState:
                records.add_metric([*names, state.name.lower()], share.count(state))
            start.add_metric(names, share.start_offset)
        yield records
        yield start
        yield CounterMetricFamily(
            "odradek_share_records_redelivered",
            "Records handed out again by this broker (a delivery count above 1)",
            value=self._shares.partitions.redelivered,
        )
        yield GaugeMetricFamily(
            "odradek_share_sessions",
            "Share sessions (share consumers fetching) open on this broker",
            value=len(self._shares.sessions),
        )
