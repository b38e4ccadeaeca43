"""What the scale benchmarks (partitions, connections) print and keep: progress lines,
a table of each measure per system with the Odradek/Kafka ratio, and a JSON file."""

from __future__ import annotations

import datetime
import json
import math
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from measure import ratio

ROOT = Path(__file__).resolve().parent.parent

# (key, label, higher is better)
Measure = tuple[str, str, bool]


def say(message: str) -> None:
    """A progress line on stderr, stamped."""
    print(f"{time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)


def table(measures: Sequence[Measure], results: Mapping[str, Mapping[str, float]]) -> str:
    """Markdown: a row per measure, a column per system, then Odradek/Kafka."""
    systems = list(results)
    lines = [
        "| measure | " + " | ".join(systems) + " | Odradek/Kafka |",
        "|---|" + "---|" * (len(systems) + 1),
    ]
    nothing: Mapping[str, float] = {}
    for key, label, higher_is_better in measures:
        values = [results[name].get(key, math.nan) for name in systems]
        better = "higher is better" if higher_is_better else "lower is better"
        quotient = ratio(
            results.get("odradek", nothing).get(key, math.nan),
            results.get("kafka", nothing).get(key, math.nan),
        )
        cells = " | ".join(map(_figure, values))
        lines.append(f"| {label} | {cells} | {_figure(quotient, 'x')} ({better}) |")
    return "\n".join(lines)


def _figure(value: float, unit: str = "") -> str:
    if math.isnan(value):
        return "n/a"
    if unit:
        return f"{value:.2f}{unit}"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"


def write_json(
    name: str, context: Mapping[str, Any], results: Mapping[str, Mapping[str, float]]
) -> None:
    """bench/results/<name>-<stamp>.json."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    path = ROOT / "bench" / "results" / f"{name}-{stamp}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"context": context, "results": results}, indent=2) + "\n")
    say(f"wrote {path}")
