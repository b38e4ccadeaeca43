"""The operator's own Prometheus metrics."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from prometheus_client import Counter, Gauge, Histogram

RECONCILIATIONS = Counter(
    "odradek_operator_reconciliations",
    "Reconciliation passes by resource kind and outcome (success, error).",
    ["kind", "outcome"],
)
DURATION = Histogram(
    "odradek_operator_reconcile_duration_seconds",
    "Time of one reconciliation pass.",
    ["kind"],
)
RESOURCES = Gauge(
    "odradek_operator_resources", "Custom resources the operator manages, by kind.", ["kind"]
)


@contextmanager
def measured(kind: str, clock: Callable[[], float] = time.monotonic) -> Iterator[None]:
    """Count and time one pass; the error still propagates."""
    start = clock()
    outcome = "error"
    try:
        yield
        outcome = "success"
    finally:
        RECONCILIATIONS.labels(kind, outcome).inc()
        DURATION.labels(kind).observe(clock() - start)
