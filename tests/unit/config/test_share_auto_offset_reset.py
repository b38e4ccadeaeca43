"""share.auto.offset.reset in Kafka's syntax: latest, earliest or by_duration with an
ISO-8601 duration read as java.time.Duration.parse reads it (a negative one refused)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from odradek.broker.config.definitions import ConfigError
from odradek.broker.config.share_auto_offset_reset import (
    ResetStrategy,
    ShareAutoOffsetReset,
    iso_duration_nanos,
    parse_share_auto_offset_reset,
    validate_share_auto_offset_reset,
)

SECOND = 1_000_000_000


def test_latest_and_earliest_name_their_strategy() -> None:
    assert parse_share_auto_offset_reset("latest") == ShareAutoOffsetReset(ResetStrategy.LATEST)
    assert parse_share_auto_offset_reset("earliest").strategy is ResetStrategy.EARLIEST


def test_by_duration_starts_that_long_ago() -> None:
    assert parse_share_auto_offset_reset("by_duration:PT1H") == ShareAutoOffsetReset(
        ResetStrategy.BY_DURATION, 3_600_000
    )
    assert parse_share_auto_offset_reset("by_duration:PT0S").duration_ms == 0


@pytest.mark.parametrize(
    ("text", "nanos"),
    [
        ("P1DT2H3M4.5S", ((24 + 2) * 60 + 3) * 60 * SECOND + 4 * SECOND + SECOND // 2),
        ("pt1m", 60 * SECOND),
        ("PT1,25S", SECOND + SECOND // 4),
        ("PT1.S", SECOND),
        ("PT-1.5S", -(SECOND + SECOND // 2)),  # the fraction takes the seconds' sign
        ("-PT-1S", SECOND),
        ("P-1DT25H", SECOND * 3600),
        ("PT0.000000001S", 1),
    ],
)
def test_durations_read_as_javas_duration_parse(text: str, nanos: int) -> None:
    assert iso_duration_nanos(text) == nanos


@pytest.mark.parametrize("text", ["", "P", "PT", "P1H", "PT1D", "1H", "PT.5S", "PT1.1234567891S"])
def test_what_javas_duration_parse_refuses_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="is not an ISO-8601 duration"):
        iso_duration_nanos(text)


@pytest.mark.parametrize(
    "text",
    ["none", "LATEST", "by_duration", "by_duration:", "by_duration:P-1D", "by_duration:-PT1S",
     "by_duration:1h", "latest "],
)  # fmt: skip
def test_anything_else_is_refused_in_kafkas_words(text: str) -> None:
    with pytest.raises(ValueError):
        parse_share_auto_offset_reset(text)
    with pytest.raises(ConfigError) as refused:
        validate_share_auto_offset_reset("share.auto.offset.reset", text)
    assert str(refused.value) == (
        f"Invalid value `{text}` for configuration share.auto.offset.reset. The value must be"
        " either 'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'."
    )


@given(st.integers(0, 10**6), st.integers(0, 100), st.integers(0, 100), st.integers(0, 10**9 - 1))
def test_any_written_duration_reads_back(days: int, hours: int, minutes: int, nanos: int) -> None:
    text = f"P{days}DT{hours}H{minutes}M0.{nanos:09d}S"
    expected = ((days * 24 + hours) * 60 + minutes) * 60 * SECOND + nanos
    assert iso_duration_nanos(text) == expected
    parsed = parse_share_auto_offset_reset(f"by_duration:{text}")
    assert parsed.duration_ms == expected // 1_000_000
