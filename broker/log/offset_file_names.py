"""Kafka's file naming: segments, indexes and snapshots are named after an offset."""

from __future__ import annotations

from pathlib import Path


def file_name(offset: int, suffix: str) -> str:
    """The offset zero-padded to 20 digits, then the suffix (".log", ".snapshot", ...)."""
    return f"{offset:020d}{suffix}"


def base_offset_of(path: Path) -> int:
    """The offset a segment, index or snapshot file is named after."""
    try:
        return int(path.name.split(".", 1)[0])
    except ValueError:
        raise ValueError(f"{path}: not named after an offset") from None
