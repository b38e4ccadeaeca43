"""Plain-text tables: columns padded to their widest cell, like Kafka's tools print."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def format_table(columns: Sequence[str], rows: Iterable[Sequence[object]]) -> list[str]:
    """The header line and one line per row, trailing spaces stripped."""
    cells = [list(columns), *([str(cell) for cell in row] for row in rows)]
    widths = [max(len(row[index]) for row in cells) for index in range(len(columns))]
    return [
        " ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in cells
    ]
