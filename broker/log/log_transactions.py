"""The transactions of one log, as its readers see them: where the stable part ends (the
last stable offset) and which aborted transactions a read_committed fetch must be told of.

The producer state knows the open transactions (the first offset of each). A completed
transaction still bounds the LSO until its marker is below the high watermark, so a
read_committed consumer never reads a transaction whose outcome could still be truncated
away. Each aborted transaction is written to the aborted transaction index of the segment
that holds its marker.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .producer_state import CompletedTxn
from .segment import LogSegment
from .transaction_index import AbortedTxn


class LogTransactions:
    def __init__(self) -> None:
        self._unreplicated: list[CompletedTxn] = []

    def complete(
        self,
        completed: CompletedTxn,
        segment: LogSegment,
        open_transactions: Mapping[int, int],
        high_watermark: int,
    ) -> None:
        """Account for a transaction a marker in ``segment`` completed; ``open_transactions``
        are the first offsets of those still open, by producer id."""
        if completed.aborted:
            others = [
                first
                for producer_id, first in open_transactions.items()
                if producer_id != completed.producer_id
            ]
            segment.txn_index.append(
                AbortedTxn(
                    completed.producer_id,
                    completed.first_offset,
                    completed.last_offset,
                    min(others, default=completed.last_offset + 1),
                )
            )
        if completed.last_offset >= high_watermark:
            self._unreplicated.append(completed)

    def high_watermark_moved(self, high_watermark: int) -> None:
        self._unreplicated = [t for t in self._unreplicated if t.last_offset >= high_watermark]

    def forget_completed(self) -> None:
        """Before the producer state is replayed again (truncation, reload)."""
        self._unreplicated = []

    def last_stable_offset(
        self, open_transactions: Mapping[int, int], high_watermark: int, log_start_offset: int
    ) -> int:
        """The first offset of the earliest transaction open or not yet replicated as
        complete, never above the high watermark (equal to it when there is none)."""
        firsts = [*open_transactions.values(), *(t.first_offset for t in self._unreplicated)]
        if not firsts:
            return high_watermark
        return min(max(min(firsts), log_start_offset), high_watermark)


def aborted_transactions(
    segments: Sequence[LogSegment], fetch_offset: int, upper_bound: int
) -> list[AbortedTxn]:
    """The aborted transactions overlapping ``[fetch_offset, upper_bound)``, searched from
    the segment holding ``fetch_offset`` (``segments`` start with it) until an entry's LSO
    shows no later one can overlap."""
    found: list[AbortedTxn] = []
    for segment in segments:
        entries, complete = segment.txn_index.collect(fetch_offset, upper_bound)
        found += entries
        if complete:
            break
    return found
