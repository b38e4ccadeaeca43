"""What a follower's fetches carry in an incremental fetch session (KIP-227)."""

from __future__ import annotations

from odradek.broker.cluster.fetch_session_handler import FetchSessionHandler
from odradek.broker.cluster.partition import PartitionKey
from odradek.broker.protocol.errors import ErrorCode

A0, A1, B0 = PartitionKey("a", 0), PartitionKey("a", 1), PartitionKey("b", 0)
NONE = ErrorCode.none


def test_after_a_full_fetch_only_moved_partitions_are_sent_and_dropped_ones_forgotten() -> None:
    handler = FetchSessionHandler(leader=1)
    full = handler.next({A0: (0, 0, 3), A1: (5, 0, 3)})
    assert (full.session_id, full.epoch, dict(full.sent)) == (0, 0, {A0: (0, 0, 3), A1: (5, 0, 3)})
    handler.answered(full, NONE, 77)

    unchanged = handler.next({A0: (0, 0, 3), A1: (5, 0, 3)})
    assert (unchanged.session_id, unchanged.epoch, dict(unchanged.sent)) == (77, 1, {})
    handler.answered(unchanged, NONE, 77)

    moved = handler.next({A0: (2, 0, 3), B0: (0, 0, 1)})  # A0 appended, A1 left, B0 joined
    assert moved.epoch == 2
    assert dict(moved.sent) == {A0: (2, 0, 3), B0: (0, 0, 1)} and moved.forgotten == (A1,)
    handler.answered(moved, NONE, 77)
    assert handler.next({A0: (2, 0, 4), B0: (0, 0, 1)}).sent == {A0: (2, 0, 4)}  # new epoch


def test_errors_and_lost_answers_start_again_with_a_full_fetch() -> None:
    handler = FetchSessionHandler(leader=1)
    wanted = {A0: (0, 0, 3)}
    handler.answered(handler.next(wanted), NONE, 77)
    stale = handler.next(wanted)
    handler.answered(stale, ErrorCode.invalid_fetch_session_epoch, 0)
    again = handler.next(wanted)  # closes session 77 and opens another
    assert (again.session_id, again.epoch, dict(again.sent)) == (77, 0, wanted)

    handler.answered(again, NONE, 78)
    handler.answered(handler.next(wanted), ErrorCode.fetch_session_id_not_found, 0)
    assert (handler.next(wanted).session_id, handler.next(wanted).epoch) == (0, 0)

    handler.answered(handler.next(wanted), NONE, 79)
    handler.failed()  # the connection dropped: the answer may never come
    assert (handler.next(wanted).session_id, handler.next(wanted).epoch) == (79, 0)


def test_a_leader_without_a_free_slot_or_closing_the_session_gets_full_fetches() -> None:
    handler = FetchSessionHandler(leader=1)
    wanted = {A0: (0, 0, 3)}
    handler.answered(handler.next(wanted), NONE, 0)  # no session opened
    assert (handler.next(wanted).epoch, dict(handler.next(wanted).sent)) == (0, wanted)
    handler.answered(handler.next(wanted), NONE, 80)
    handler.answered(handler.next(wanted), NONE, 0)  # the leader closed it
    assert (handler.next(wanted).session_id, handler.next(wanted).epoch) == (0, 0)
