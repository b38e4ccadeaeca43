"""compare.py's results: samples, their median and range per system, JSON, Markdown and a chart."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from measure import Spread, ratio

SYSTEMS = ("odradek", "kafka")


@dataclass(frozen=True)
class Sample:
    """One phase of one workload on one system in one round."""

    workload: str
    setting: str
    phase: str
    system: str
    round: int
    records_per_s: float
    mb_per_s: float
    p50_ms: float
    p99_ms: float
    p999_ms: float
    cpu_s_per_gb: float
    peak_rss_mib: float
    ready_s: float
    broker_cpu_pct: float = math.nan
    """The brokers' CPU time over the phase's, in percent: 100 is their whole CPU."""
    client_cpu_pct: float = math.nan
    """The load generator's, likewise: near 100, the client set the pace (NaN: unknown)."""


# (field, column title, format, higher is better)
METRICS = (
    ("records_per_s", "records/s", "{:,.0f}", True),
    ("mb_per_s", "MB/s", "{:,.1f}", True),
    ("p50_ms", "p50 ms", "{:,.1f}", False),
    ("p99_ms", "p99 ms", "{:,.1f}", False),
    ("p999_ms", "p99.9 ms", "{:,.1f}", False),
    ("cpu_s_per_gb", "CPU s/GB", "{:,.2f}", False),
    ("broker_cpu_pct", "broker CPU %", "{:,.0f}", False),
    ("client_cpu_pct", "client CPU %", "{:,.0f}", False),
    ("peak_rss_mib", "peak RSS MiB", "{:,.0f}", False),
    ("ready_s", "ready s", "{:,.1f}", False),
)


@dataclass(frozen=True)
class Row:
    """The spread of every metric of one (workload, phase) on one system."""

    workload: str
    setting: str
    phase: str
    system: str
    spreads: dict[str, Spread]


def summarize(samples: Sequence[Sample]) -> list[Row]:
    """One row per (workload, phase, system), in the order the samples came."""
    keys: dict[tuple[str, str, str, str], list[Sample]] = {}
    for sample in samples:
        key = (sample.workload, sample.setting, sample.phase, sample.system)
        keys.setdefault(key, []).append(sample)
    return [
        Row(
            *key,
            {name: Spread.of([getattr(s, name) for s in group]) for name, *_ in METRICS},
        )
        for key, group in keys.items()
    ]


def pairs(rows: Iterable[Row]) -> list[tuple[Row, Row]]:
    """(Odradek row, Kafka row) for each (workload, phase) both systems ran."""
    by_key = {(row.workload, row.phase, row.system): row for row in rows}
    return [
        (row, by_key[(row.workload, row.phase, "kafka")])
        for row in by_key.values()
        if row.system == "odradek" and (row.workload, row.phase, "kafka") in by_key
    ]


def _cell(spread: Spread, pattern: str) -> str:
    if math.isnan(spread.median):
        return "-"
    text = pattern.format(spread.median)
    if spread.high > spread.low:
        text += f" ({pattern.format(spread.low)}..{pattern.format(spread.high)})"
    return text


def markdown_table(samples: Sequence[Sample]) -> str:
    """Odradek, Kafka and the Odradek/Kafka ratio of medians, per workload and phase."""
    header = ["workload", "phase", "system", *(title for _, title, _, _ in METRICS)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for odradek, kafka in pairs(summarize(samples)):
        for row in (odradek, kafka):
            cells = [_cell(row.spreads[name], pattern) for name, _, pattern, _ in METRICS]
            lines.append(
                f"| {row.workload} ({row.setting}) | {row.phase} | {row.system} | "
                + " | ".join(cells)
                + " |"
            )
        ratios = [
            ratio(odradek.spreads[name].median, kafka.spreads[name].median) for name, *_ in METRICS
        ]
        lines.append(
            "| | | **Odradek/Kafka** | "
            + " | ".join("-" if math.isnan(r) else f"**{r:.2f}**" for r in ratios)
            + " |"
        )
    return "\n".join(lines)


def write_json(path: Path, samples: Sequence[Sample], context: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {"context": context, "samples": [asdict(sample) for sample in samples]}
    path.write_text(json.dumps(document, indent=1) + "\n")


def read_json(path: Path) -> tuple[list[Sample], dict[str, object]]:
    document = json.loads(path.read_text())
    return [Sample(**sample) for sample in document["samples"]], document["context"]


def update_markdown(path: Path, table: str, preamble: str, label: str = "") -> None:
    """Replace the text between the table markers in ``path`` (or append it) with the table.

    Each ``label`` (the clients' listener, e.g. ``SSL``; none for PLAINTEXT) has its own
    markers, so runs over different listeners keep separate tables.
    """
    name = f"{label} table" if label else "table"
    begin, end = f"<!-- compare.py {name}: begin -->", f"<!-- compare.py {name}: end -->"
    block = f"{begin}\n{preamble}\n\n{table}\n{end}"
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    if begin in text and end in text:
        before, rest = text.split(begin, 1)
        after = rest.split(end, 1)[1]
        text = before + block + after
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text)
