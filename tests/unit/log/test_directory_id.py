"""A log directory keeps the id it was given, across restarts."""

from __future__ import annotations

from pathlib import Path

from odradek.broker.log.directory_id import META_PROPERTIES, directory_id


def test_the_first_call_records_an_id_that_later_calls_return(tmp_path: Path) -> None:
    first = directory_id(tmp_path)
    assert len(first) == 32
    assert (tmp_path / META_PROPERTIES).read_text() == f"directory.id={first}\n"
    assert directory_id(tmp_path) == first


def test_each_directory_gets_its_own_id(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert directory_id(tmp_path / "a") != directory_id(tmp_path / "b")
