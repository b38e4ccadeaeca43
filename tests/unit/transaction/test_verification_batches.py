"""How a partition leader batches its questions to one transaction coordinator: each
transactional id once per AddPartitionsToTxn, questions of the same producer merged."""

from __future__ import annotations

import asyncio

from odradek.broker.transaction.verification import PendingCheck, one_per_transaction


def _asked(transactional_id: str, epoch: int, verify_only: bool, partition: int) -> PendingCheck:
    future: asyncio.Future[dict[tuple[str, int], object]] = asyncio.Future(
        loop=asyncio.new_event_loop()
    )
    return PendingCheck(transactional_id, (7, epoch), verify_only, [("t", partition)], future)  # type: ignore[arg-type]


def test_questions_about_one_transaction_share_a_batch_and_others_wait() -> None:
    first = _asked("a", 1, False, 0)
    same = _asked("a", 1, False, 1)
    other_check = _asked("a", 1, True, 2)
    newer_epoch = _asked("a", 2, False, 3)
    elsewhere = _asked("b", 1, True, 0)
    batch, later = one_per_transaction([first, same, other_check, newer_epoch, elsewhere])
    assert batch == [first, same, elsewhere]
    assert later == [other_check, newer_epoch]
    # the next round sends the first of those that waited, and the other waits again
    batch, later = one_per_transaction(later)
    assert (batch, later) == ([other_check], [newer_epoch])
