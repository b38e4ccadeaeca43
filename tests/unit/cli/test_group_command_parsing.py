"""``odradek group`` arguments: topic/partition scopes, reset targets and times."""

from __future__ import annotations

import argparse
import datetime

import pytest

from odradek.cli.group_command import timestamp_ms, topic_partitions
from odradek.cli.main import build_parser


def test_a_topic_scope_may_name_partitions() -> None:
    assert topic_partitions("orders") == ("orders", [])
    assert topic_partitions("orders:0,2") == ("orders", [0, 2])
    for bad in (":1", "orders:x"):
        with pytest.raises(argparse.ArgumentTypeError):
            topic_partitions(bad)


def test_times_are_iso_8601_and_local_without_a_zone() -> None:
    assert timestamp_ms("2024-05-01T12:00:00Z") == 1714564800000
    assert timestamp_ms("2024-05-01T14:00:00+02:00") == 1714564800000
    local = datetime.datetime(2024, 5, 1, 12, 0).astimezone()
    assert timestamp_ms("2024-05-01T12:00:00") == int(local.timestamp() * 1000)
    with pytest.raises(argparse.ArgumentTypeError):
        timestamp_ms("yesterday")


def test_reset_needs_one_scope_and_one_target_and_is_a_dry_run_by_default() -> None:
    parser = build_parser()
    args = parser.parse_args(["group", "reset-offsets", "g", "--topic", "t:1", "--to-latest"])
    assert (args.topics, args.to_latest, args.execute) == ([("t", [1])], True, False)
    for argv in (
        ["group", "reset-offsets", "g", "--to-latest"],
        ["group", "reset-offsets", "g", "--all-topics"],
        ["group", "reset-offsets", "g", "--all-topics", "--to-latest", "--to-offset", "3"],
    ):
        with pytest.raises(SystemExit):
            parser.parse_args(argv)
