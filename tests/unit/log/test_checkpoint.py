"""Checkpoint files: Kafka's text format, written atomically."""

from __future__ import annotations

from pathlib import Path

import pytest

from odradek.broker.log.checkpoint import CorruptCheckpointError, read_checkpoint, write_checkpoint
from odradek.broker.log.file_io import write_atomically


def test_checkpoint_round_trips_in_kafkas_format(tmp_path: Path) -> None:
    path = tmp_path / "leader-epoch-checkpoint"
    write_checkpoint(path, 0, [(0, 0), (3, 150)])

    assert path.read_text() == "0\n2\n0 0\n3 150\n"
    assert read_checkpoint(path, 0) == [["0", "0"], ["3", "150"]]


def test_missing_checkpoint_reads_as_none(tmp_path: Path) -> None:
    assert read_checkpoint(tmp_path / "absent", 0) is None


@pytest.mark.parametrize("content", ["", "1\n0\n", "0\n2\n1 1\n", "zero\n"])
def test_malformed_checkpoint_is_refused(tmp_path: Path, content: str) -> None:
    path = tmp_path / "checkpoint"
    path.write_text(content)
    with pytest.raises(CorruptCheckpointError):
        read_checkpoint(path, 0)


def test_atomic_write_replaces_the_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_bytes(b"old")
    write_atomically(path, b"new")

    assert path.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["file"]
