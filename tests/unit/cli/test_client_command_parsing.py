"""The pure parts of the client commands: formats, offsets, record sources, progress."""

from __future__ import annotations

import argparse

import pytest
from confluent_kafka import Message

from odradek.cli.client_options import CliError, int_at_least, key_value
from odradek.cli.consume_command import compile_format, start_offset
from odradek.cli.produce_command import line_records, synthetic_records
from odradek.cli.progress import Progress

MESSAGE = Message(
    topic="orders",
    partition=3,
    offset=42,
    key=b"k1",
    value=b"hello",
    headers=[("trace", b"t-1"), ("empty", None)],
    timestamp=(1, 1_700_000_000_123),
)


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        ("%s\\n", b"hello\n"),
        ("%k=%s", b"k1=hello"),
        ("%t/%p@%o %T", b"orders/3@42 1700000000123"),
        ("%h", b"trace=t-1,empty="),
        ("%K %S", b"2 5"),
        ("100%% \\t\\\\ done", b"100% \t\\ done"),
    ],
)
def test_format_tokens_render_message_fields_like_kcat(text: str, rendered: bytes) -> None:
    assert compile_format(text)(MESSAGE) == rendered


def test_format_renders_a_null_key_as_empty() -> None:
    assert compile_format("[%k]")(Message(topic="t", value=b"v")) == b"[]"


@pytest.mark.parametrize("text", ["%z", "trailing %", "trailing \\"])
def test_format_rejects_unknown_or_unfinished_tokens(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        compile_format(text)


@pytest.mark.parametrize(
    ("text", "offset"),
    [("beginning", "beginning"), ("end", "end"), ("17", 17), ("-2", -2), ("-1", -1)],
)
def test_start_offset_accepts_names_absolute_and_relative_offsets(
    text: str, offset: int | str
) -> None:
    assert start_offset(text) == offset


def test_start_offset_rejects_other_words() -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        start_offset("latest")


def test_line_records_strip_line_endings_and_split_at_the_first_separator() -> None:
    lines = [b"a::1\n", b"b::2::x\r\n", b"c::"]

    assert list(line_records(lines, "::")) == [(b"a", b"1"), (b"b", b"2::x"), (b"c", b"")]
    assert list(line_records([b"plain\n", b"\n"], None)) == [(None, b"plain"), (None, b"")]


def test_line_records_name_the_line_missing_its_separator() -> None:
    with pytest.raises(CliError, match="line 2 has no key separator ':'"):
        list(line_records([b"a:1\n", b"b\n"], ":"))


def test_synthetic_records_have_the_requested_size_and_start_with_their_number() -> None:
    records = list(synthetic_records(1000, 64))

    assert len(records) == 1000
    assert all(key is None and len(value) == 64 for key, value in records)
    assert records[999][1].startswith(b"999 ")
    assert len({value for _, value in records}) == 1000


def test_key_value_and_int_at_least_reject_malformed_arguments() -> None:
    assert key_value("cleanup.policy=compact=yes") == ("cleanup.policy", "compact=yes")
    assert int_at_least(0)("0") == 0
    for parse, text in [(key_value, "novalue"), (key_value, "=x"), (int_at_least(1), "0")]:
        with pytest.raises(argparse.ArgumentTypeError):
            parse(text)


def test_progress_reports_only_after_each_interval(capsys: pytest.CaptureFixture[str]) -> None:
    now = [0.0]
    progress = Progress("produced", total=10, interval=2.0, clock=lambda: now[0])

    progress.add(4, 4 * 1024 * 1024)
    now[0] = 2.0
    progress.add(1, 1024 * 1024)
    now[0] = 3.0
    progress.add(1, 0)

    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "produced 5 records (5.0 MiB) in 2.0 s: 2 records/s, 2.5 MiB/s; 50% of 10",
    ]
