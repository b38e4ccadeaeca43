from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from odradek.mirror.ack_tracker import AckTracker

ORDERS = ("orders", 0)


def test_before_any_acknowledgement_the_commit_stays_at_the_first_dispatched_record() -> None:
    tracker = AckTracker()
    assert tracker.committable() == {}
    tracker.dispatched(ORDERS, 10)
    assert tracker.committable() == {ORDERS: 10} and tracker.pending() == 1


def test_commits_stop_at_the_first_record_the_target_has_not_acknowledged() -> None:
    tracker = AckTracker()
    for offset in (10, 11, 12, 13):
        tracker.dispatched(ORDERS, offset)
    tracker.acknowledged(ORDERS, 10)
    tracker.acknowledged(ORDERS, 12)
    tracker.acknowledged(ORDERS, 13)
    assert tracker.committable() == {ORDERS: 11}
    tracker.acknowledged(ORDERS, 11)
    assert tracker.committable() == {ORDERS: 14} and tracker.pending() == 0


def test_a_forgotten_partition_ignores_late_acknowledgements() -> None:
    tracker = AckTracker()
    tracker.dispatched(ORDERS, 0)
    tracker.forget([ORDERS])
    tracker.acknowledged(ORDERS, 0)
    assert tracker.committable() == {} and tracker.pending() == 0


@given(st.permutations(range(20)), st.integers(0, 20))
def test_the_committed_offset_never_passes_an_unacknowledged_record(
    order: list[int], acked: int
) -> None:
    tracker = AckTracker()
    for offset in range(20):
        tracker.dispatched(ORDERS, offset)
    for offset in order[:acked]:
        tracker.acknowledged(ORDERS, offset)
    done = set(order[:acked])
    expected = next((o for o in range(20) if o not in done), 20)
    assert tracker.committable().get(ORDERS, 0) == expected
