"""LogManager over several log directories (JBOD): where new replicas go, and how a
replica's copy in another directory replaces it, even across a crash mid-swap."""

from __future__ import annotations

from pathlib import Path

import pytest
from batch_builder import build_batch
from log_testing import FakeClock

from odradek.broker.log import LogConfig, LogManager
from odradek.broker.protocol.errors import KafkaError


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    return tmp_path / "a", tmp_path / "b"


def test_new_replicas_go_to_the_directory_holding_fewest(
    dirs: tuple[Path, Path], clock: FakeClock
) -> None:
    manager = LogManager(*dirs, clock=clock)
    manager.load()
    for partition in range(4):
        manager.get_or_create("t", partition, LogConfig())
    placed = [manager.log_dir_of("t", partition) for partition in range(4)]
    assert sorted(placed) == sorted([dirs[0], dirs[0], dirs[1], dirs[1]])
    assert {p.name for p in dirs[0].iterdir()} | {p.name for p in dirs[1].iterdir()} == {
        "t-0", "t-1", "t-2", "t-3"
    }  # fmt: skip
    manager.close_all()


def test_a_preferred_directory_wins_for_a_replica_not_created_yet(
    dirs: tuple[Path, Path], clock: FakeClock
) -> None:
    manager = LogManager(*dirs, clock=clock)
    manager.load()
    manager.get_or_create("t", 0, LogConfig())  # now b holds fewest
    manager.prefer_log_dir("t", 1, manager.known_log_dir(str(dirs[0])))
    manager.get_or_create("t", 1, LogConfig())
    assert manager.log_dir_of("t", 1) == dirs[0]
    manager.close_all()


def test_a_path_that_is_none_of_the_log_dirs_is_log_dir_not_found(
    dirs: tuple[Path, Path], tmp_path: Path, clock: FakeClock
) -> None:
    manager = LogManager(*dirs, clock=clock)
    with pytest.raises(KafkaError) as refused:
        manager.known_log_dir(str(tmp_path / "elsewhere"))
    assert refused.value.code.name == "log_dir_not_found"
    assert manager.known_log_dir(str(dirs[1]) + "/") == dirs[1]


def test_the_future_replaces_the_current_log_under_the_plain_name(
    dirs: tuple[Path, Path], clock: FakeClock
) -> None:
    manager = LogManager(dirs[0], dirs[1], clock=clock)
    manager.load()
    current = manager.get_or_create("t", 0, LogConfig())
    current.append_as_leader(build_batch(3), leader_epoch=0)
    target = dirs[1] if current.directory.parent == dirs[0] else dirs[0]
    future = manager.create_future("t", 0, target)
    assert future.directory.name.startswith("t-0.") and future.directory.name.endswith("-future")
    future.append_as_follower(current.read(0, 1 << 20).regions[0].read())

    old = current
    moved = manager.replace_with_future("t", 0)

    assert manager.get("t", 0) is moved and moved.directory == target / "t-0"
    assert moved.log_end_offset == 3
    assert old.directory.name.endswith("-delete") and old.directory.exists()
    assert manager.future("t", 0) is None
    old.delete()
    manager.close_all()
    reopened = LogManager(*dirs, clock=clock)
    reopened.load()
    assert reopened.log_dir_of("t", 0) == target
    reopened.close_all()


def test_load_promotes_a_future_left_without_its_log_and_drops_replaced_copies(
    dirs: tuple[Path, Path], clock: FakeClock
) -> None:
    manager = LogManager(*dirs, clock=clock)
    manager.load()
    current = manager.get_or_create("t", 0, LogConfig())
    current.append_as_leader(build_batch(2), leader_epoch=0)
    source = current.directory.parent
    target = dirs[1] if source == dirs[0] else dirs[0]
    future = manager.create_future("t", 0, target)
    future.append_as_follower(current.read(0, 1 << 20).regions[0].read())
    manager.close_all()
    # a stop between the swap's two renames: the current log is already "-delete"
    unique = future.directory.name.split(".")[1].removesuffix("-future")
    (source / "t-0").rename(source / f"t-0.{unique}-delete")

    reopened = LogManager(*dirs, clock=clock)
    reopened.load()

    promoted = reopened.get("t", 0)
    assert promoted is not None and promoted.directory == target / "t-0"
    assert promoted.log_end_offset == 2
    assert not list(source.iterdir())
    assert reopened.future("t", 0) is None
    reopened.close_all()


def test_load_keeps_a_future_beside_its_log_so_the_move_resumes(
    dirs: tuple[Path, Path], clock: FakeClock
) -> None:
    manager = LogManager(*dirs, clock=clock)
    manager.load()
    current = manager.get_or_create("t", 0, LogConfig())
    target = dirs[1] if current.directory.parent == dirs[0] else dirs[0]
    manager.create_future("t", 0, target)
    manager.close_all()

    reopened = LogManager(*dirs, clock=clock)
    reopened.load()

    future = reopened.future("t", 0)
    assert future is not None and future.directory.parent == target
    assert reopened.log_dir_of("t", 0) != target
    reopened.delete("t", 0)
    assert not list(dirs[0].iterdir()) and not list(dirs[1].iterdir())
    reopened.close_all()


def test_one_partition_in_two_log_dirs_refuses_to_load(
    dirs: tuple[Path, Path], clock: FakeClock
) -> None:
    for log_dir in dirs:
        (log_dir / "t-0").mkdir(parents=True)
    with pytest.raises(RuntimeError, match="t-0 is in two log directories"):
        LogManager(*dirs, clock=clock).load()
