"""A PNG of compare.py's results: throughput and broker CPU per GB, Odradek beside Kafka."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
from compare_report import Row, Sample, pairs, summarize

COLOURS = {"odradek": "#2a7fb8", "kafka": "#d9822b"}
PANELS = (
    ("mb_per_s", "MB/s (higher is better)"),
    ("cpu_s_per_gb", "broker CPU s/GB (lower is better)"),
)


def write_chart(path: Path, samples: Sequence[Sample], title: str) -> None:
    """Grouped bars (median, whiskers = range over rounds) for each workload and phase."""
    paired = pairs(summarize(samples))
    labels = [f"{odradek.workload}\n{odradek.phase}" for odradek, _ in paired]
    figure, axes = plt.subplots(len(PANELS), 1, figsize=(max(8.0, 1.1 * len(labels)), 8.5))
    width = 0.4
    for axis, (metric, caption) in zip(axes, PANELS, strict=True):
        for offset, index in ((-width / 2, 0), (width / 2, 1)):
            rows: list[Row] = [pair[index] for pair in paired]
            spreads = [row.spreads[metric] for row in rows]
            medians = [spread.median for spread in spreads]
            errors = [
                [spread.median - spread.low for spread in spreads],
                [spread.high - spread.median for spread in spreads],
            ]
            system = rows[0].system if rows else ""
            axis.bar(
                [position + offset for position in range(len(rows))],
                medians,
                width,
                yerr=errors,
                capsize=3,
                label=system,
                color=COLOURS.get(system),
            )
        axis.set_ylabel(caption)
        axis.set_xticks(range(len(labels)))
        axis.set_xticklabels(labels, fontsize=7)
        axis.grid(axis="y", alpha=0.3)
        axis.legend()
    axes[0].set_title(title, fontsize=10)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
