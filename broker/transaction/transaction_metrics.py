"""Transaction metrics on ``/metrics``, read from the coordinator at scrape time: the open
transactions of the ids this broker coordinates, the age of the oldest, and the commits and
aborts it prepared, the aborts by reason."""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from odradek.broker.transaction.coordinator import AbortReason, TransactionCoordinator


class TransactionCollector(Collector):
    def __init__(self, coordinator: TransactionCoordinator) -> None:
        self._coordinator = coordinator

    def collect(self) -> Iterator[Metric]:
        coordinator = self._coordinator
        ages_ms = coordinator.open_transaction_ages_ms()
        yield GaugeMetricFamily(
            "odradek_open_transactions",
            "Transactions open (Ongoing, or preparing to commit or abort) of the transactional"
            " ids this broker coordinates",
            value=len(ages_ms),
        )
        yield GaugeMetricFamily(
            "odradek_open_transaction_oldest_age_seconds",
            "How long the oldest open transaction this broker coordinates has been open (0: none)",
            value=max(ages_ms, default=0) / 1000,
        )
        yield CounterMetricFamily(
            "odradek_transaction_commits",
            "Transactions the producer committed, as this broker coordinated them",
            value=coordinator.commits,
        )
        aborts = CounterMetricFamily(
            "odradek_transaction_aborts",
            "Transactions aborted by the coordinator on this broker, by reason: client (the"
            " producer aborted), timeout (open past transaction.timeout.ms), fenced (a new"
            " producer with the same transactional id)",
            labels=["reason"],
        )
        for reason in AbortReason:
            aborts.add_metric([reason.value], coordinator.aborts[reason])
        yield aborts
