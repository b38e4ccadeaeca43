"""Host metric samples, as agents on a fleet of machines would send them (no pyspark here).

Each host reports a few gauges at a fixed interval; values follow a slow random
walk with noise. Samples are keyed by host.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from dataclasses import asdict, dataclass

METRICS = ("cpu.percent", "memory.percent", "disk.io.mbps", "net.rx.mbps")


@dataclass(frozen=True)
class MetricSample:
    host: str
    metric: str
    value: float
    event_time_ms: int

    def key(self) -> bytes:
        return self.host.encode()

    def encode(self) -> bytes:
        return json.dumps(asdict(self), separators=(",", ":")).encode()

    @classmethod
    def decode(cls, value: bytes) -> MetricSample:
        return cls(**json.loads(value))


def metric_samples(
    seed: int, start_ms: int, rate_per_s: float, hosts: int = 20
) -> Iterator[MetricSample]:
    """An endless, reproducible stream of samples, ``rate_per_s`` per second of event time."""
    rng = random.Random(seed)
    level = {(h, m): rng.uniform(10, 60) for h in range(hosts) for m in METRICS}
    step_ms = 1000 / rate_per_s
    for n in range(2**63):
        host, metric = divmod(n, len(METRICS))
        series = (host % hosts, METRICS[metric])
        level[series] = min(100.0, max(0.0, level[series] + rng.gauss(0, 2)))
        yield MetricSample(
            host=f"host-{series[0]:03d}",
            metric=series[1],
            value=round(level[series] + rng.gauss(0, 1), 3),
            event_time_ms=start_ms + int(n * step_ms),
        )
