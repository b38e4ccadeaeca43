"""Kafka's LeaderEpochFileCache: the first offset written in each leader epoch."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .checkpoint import read_checkpoint, write_checkpoint

FILE_NAME = "leader-epoch-checkpoint"
VERSION = 0
UNDEFINED = -1


@dataclass(frozen=True, slots=True)
class EpochEntry:
    epoch: int
    start_offset: int


class LeaderEpochCache:
    """Epochs in increasing order with their start offsets, checkpointed on every change.

    Changes are rare (a new leader, a truncation), so writing the file each
    time keeps it exact without a separate flush schedule.
    """

    def __init__(self, directory: Path) -> None:
        self.path = directory / FILE_NAME
        rows = read_checkpoint(self.path, VERSION) or []
        self._entries = [EpochEntry(int(epoch), int(start)) for epoch, start in rows]

    @property
    def entries(self) -> tuple[EpochEntry, ...]:
        return tuple(self._entries)

    @property
    def latest_epoch(self) -> int:
        return self._entries[-1].epoch if self._entries else UNDEFINED

    def assign(self, epoch: int, start_offset: int) -> None:
        """Record that ``epoch`` starts at ``start_offset``, if it is newer than the latest."""
        if epoch <= self.latest_epoch:
            return
        kept = [e for e in self._entries if e.start_offset < start_offset]
        self._replace([*kept, EpochEntry(epoch, start_offset)])

    def epoch_for(self, offset: int) -> int:
        """The epoch the batch at ``offset`` was written in (-1 if no entry starts at or
        before it)."""
        found = [e.epoch for e in self._entries if e.start_offset <= offset]
        return found[-1] if found else UNDEFINED

    def end_offset_for(self, epoch: int, log_end_offset: int) -> tuple[int, int]:
        """OffsetForLeaderEpoch: (largest known epoch <= ``epoch``, the offset where it ended)."""
        if epoch < 0 or not self._entries:
            return UNDEFINED, UNDEFINED
        if epoch == self.latest_epoch:
            return epoch, log_end_offset
        higher = next((e for e in self._entries if e.epoch > epoch), None)
        if higher is None:
            return UNDEFINED, UNDEFINED
        floor = [e for e in self._entries if e.epoch <= epoch]
        # below the first known epoch Kafka answers with the requested epoch itself
        return (floor[-1].epoch if floor else epoch), higher.start_offset

    def truncate_from_end(self, end_offset: int) -> None:
        """Forget epochs starting at or after ``end_offset`` (the log was cut there)."""
        kept = [e for e in self._entries if e.start_offset < end_offset]
        if len(kept) != len(self._entries):
            self._replace(kept)

    def truncate_from_start(self, start_offset: int) -> None:
        """Forget what lies below a new log start: the epoch holding ``start_offset`` now
        starts there, earlier ones go (Kafka's truncateFromStart)."""
        below = [e for e in self._entries if e.start_offset <= start_offset]
        if not below or (len(below) == 1 and below[0].start_offset == start_offset):
            return
        later = [e for e in self._entries if e.start_offset > start_offset]
        self._replace([EpochEntry(below[-1].epoch, start_offset), *later])

    def clear(self) -> None:
        self._replace([])

    def _replace(self, entries: list[EpochEntry]) -> None:
        write_checkpoint(self.path, VERSION, [(e.epoch, e.start_offset) for e in entries])
        self._entries = entries
