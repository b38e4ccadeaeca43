"""Replacing segments by cleaned ones so that a crash leaves the old or the new set, never a mix.

The cleaner writes each new segment aside as ``<base>.log.cleaned`` (with its
``.index.cleaned`` and ``.timeindex.cleaned``), fsynced. The swap then commits
by atomically writing a manifest naming the segments each cleaned one
replaces, and rolls forward: delete the replaced files, rename the cleaned
ones over their final names, record the offset cleaned up to, delete the
manifest. Rolling forward is idempotent, so recovery repeats it when the
manifest exists and otherwise discards leftover ``.cleaned`` files: before the
manifest the old segments are untouched.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from .checkpoint import read_checkpoint, write_checkpoint
from .file_io import fsync_directory
from .segment import SEGMENT_SUFFIXES, segment_path

logger = logging.getLogger(__name__)

CLEANED_SUFFIX = ".cleaned"
MANIFEST_FILE = "cleaner-swap"
MANIFEST_VERSION = 0
CLEANER_CHECKPOINT_FILE = "cleaner-offset-checkpoint"
CLEANER_CHECKPOINT_VERSION = 0


@dataclass(frozen=True)
class SegmentSwap:
    """Cleaned segments replacing old ones, and the offset the log is now cleaned up to."""

    groups: tuple[tuple[int, ...], ...]  # base offsets replaced by each cleaned segment
    cleaned_up_to: int  # the first dirty offset once the swap is done

    def new_base(self, group: tuple[int, ...]) -> int:
        """A cleaned segment keeps the name of the first segment it replaces."""
        return group[0]


def read_cleaned_up_to(directory: Path) -> int:
    """The cleaner checkpoint: offsets below it were compacted (0 if never)."""
    rows = read_checkpoint(directory / CLEANER_CHECKPOINT_FILE, CLEANER_CHECKPOINT_VERSION)
    return int(rows[0][0]) if rows else 0


def write_cleaned_up_to(directory: Path, offset: int) -> None:
    write_checkpoint(directory / CLEANER_CHECKPOINT_FILE, CLEANER_CHECKPOINT_VERSION, [(offset,)])


def commit_and_complete(directory: Path, swap: SegmentSwap) -> None:
    """Commit ``swap`` (its cleaned files written and fsynced) and carry it out."""
    rows: list[tuple[int, ...]] = [(swap.cleaned_up_to,), *swap.groups]
    write_checkpoint(directory / MANIFEST_FILE, MANIFEST_VERSION, rows)
    _complete(directory, swap)


def recover_swap(directory: Path) -> None:
    """Finish a committed swap interrupted by a crash, or discard an uncommitted one."""
    rows = read_checkpoint(directory / MANIFEST_FILE, MANIFEST_VERSION)
    if rows is None:
        discard_cleaned(directory)
        return
    swap = SegmentSwap(
        groups=tuple(tuple(int(base) for base in row) for row in rows[1:]),
        cleaned_up_to=int(rows[0][0]),
    )
    logger.warning("%s: completing an interrupted cleaner swap", directory.name)
    _complete(directory, swap)


def discard_cleaned(directory: Path) -> None:
    """Delete cleaned files that no committed swap names."""
    for path in directory.glob("*" + CLEANED_SUFFIX):
        path.unlink()


def _complete(directory: Path, swap: SegmentSwap) -> None:
    for group in swap.groups:
        for base in group[1:]:
            for suffix in SEGMENT_SUFFIXES:
                segment_path(directory, base, suffix).unlink(missing_ok=True)
        base = swap.new_base(group)
        # the .log last: once it is renamed, this group is done
        for suffix in reversed(SEGMENT_SUFFIXES):
            cleaned = segment_path(directory, base, suffix + CLEANED_SUFFIX)
            if cleaned.exists():
                os.replace(cleaned, segment_path(directory, base, suffix))
    fsync_directory(directory)
    write_cleaned_up_to(directory, swap.cleaned_up_to)
    (directory / MANIFEST_FILE).unlink()
    fsync_directory(directory)
