"""Kafka's text checkpoint format: a version line, an entry count, one entry per line."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .file_io import write_atomically


class CorruptCheckpointError(ValueError):
    """A checkpoint file that does not parse: the broker refuses to guess its content."""


def write_checkpoint(path: Path, version: int, entries: Sequence[Sequence[object]]) -> None:
    """Atomically write ``entries`` (each a sequence of space-separated fields)."""
    lines = [str(version), str(len(entries))]
    lines.extend(" ".join(str(field) for field in entry) for entry in entries)
    write_atomically(path, ("\n".join(lines) + "\n").encode())


def read_checkpoint(path: Path, version: int) -> list[list[str]] | None:
    """Return the entries' fields, or None when the file does not exist."""
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        return None
    try:
        found_version, count = int(lines[0]), int(lines[1])
    except (IndexError, ValueError) as exc:
        raise CorruptCheckpointError(f"{path}: malformed header") from exc
    if found_version != version:
        raise CorruptCheckpointError(f"{path}: version {found_version}, expected {version}")
    entries = [line.split() for line in lines[2:]]
    if len(entries) != count:
        raise CorruptCheckpointError(f"{path}: {len(entries)} entries, header says {count}")
    return entries
