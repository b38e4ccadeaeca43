"""Share sessions: epochs, the session limit, and connections ending their sessions."""

from __future__ import annotations

import uuid

import pytest

from odradek.broker.protocol.errors import ErrorCode, KafkaError
from odradek.broker.share.share_sessions import ShareSessions

TOPIC = uuid.uuid4()


def refused(code: ErrorCode, call: object, *args: object) -> None:
    with pytest.raises(KafkaError) as raised:
        call(*args)  # type: ignore[operator]
    assert raised.value.code is code


def test_each_request_carries_the_next_epoch() -> None:
    sessions = ShareSessions(10)
    session, previous = sessions.open("g", "m", connection_id=1)
    assert previous is None and session.epoch == 1
    assert sessions.advance("g", "m", 1) is session
    refused(ErrorCode.invalid_share_session_epoch, sessions.advance, "g", "m", 1)
    assert sessions.advance("g", "m", 2).epoch == 3
    refused(ErrorCode.share_session_not_found, sessions.advance, "g", "other", 1)


def test_reopening_replaces_the_members_session() -> None:
    sessions = ShareSessions(10)
    first, _ = sessions.open("g", "m", 1)
    first.update([(TOPIC, 0)], [])
    second, previous = sessions.open("g", "m", 2)
    assert previous is first and second.partitions == {}
    assert len(sessions) == 1


def test_partitions_are_added_and_forgotten_in_order() -> None:
    session, _ = ShareSessions(10).open("g", "m", 1)
    session.update([(TOPIC, 2), (TOPIC, 0)], [])
    session.update([(TOPIC, 1)], [(TOPIC, 2)])
    assert list(session.partitions) == [(TOPIC, 0), (TOPIC, 1)]


def test_the_session_limit_is_kept() -> None:
    sessions = ShareSessions(1)
    sessions.open("g", "a", 1)
    refused(ErrorCode.share_session_limit_reached, sessions.open, "g", "b", 1)


def test_closing_a_connection_ends_the_sessions_it_opened() -> None:
    sessions = ShareSessions(10)
    sessions.open("g", "a", 1)[0].update([(TOPIC, 0)], [])
    sessions.open("g", "b", 2)[0].update([(TOPIC, 1)], [])
    assert [s.member_id for s in sessions.close_connection(1)] == ["a"]
    assert sessions.partitions_in_use("g") == {(TOPIC, 1)}
    refused(ErrorCode.share_session_not_found, sessions.close, "g", "a")
    assert sessions.close("g", "b").member_id == "b"
