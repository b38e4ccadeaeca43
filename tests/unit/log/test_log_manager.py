"""LogManager: partition directories under one data directory."""

from __future__ import annotations

from pathlib import Path

from batch_builder import build_batch
from log_testing import FakeClock

from odradek.broker.log import LogConfig, LogManager
from odradek.broker.log.log_manager import parse_partition_dir_name


def test_partition_directory_names_split_at_the_last_dash() -> None:
    assert parse_partition_dir_name("my-topic.v2-13") == ("my-topic.v2", 13)
    assert parse_partition_dir_name("__consumer_offsets-0") == ("__consumer_offsets", 0)
    assert parse_partition_dir_name("no-partition") is None


def test_load_reopens_every_partition_created_before(tmp_path: Path, clock: FakeClock) -> None:
    manager = LogManager(tmp_path, clock=clock)
    for topic, partition in (("a-b.c", 0), ("a-b.c", 1), ("orders", 3)):
        log = manager.get_or_create(topic, partition, LogConfig())
        log.append_as_leader(build_batch(partition + 1), leader_epoch=0)
    manager.close_all()
    (tmp_path / "stray-file").write_text("")

    manager = LogManager(tmp_path, clock=clock)
    manager.load()

    found = {
        (topic, partition): log.log_end_offset for topic, partition, log in manager.partitions()
    }
    assert found == {("a-b.c", 0): 1, ("a-b.c", 1): 2, ("orders", 3): 4}
    manager.close_all()


def test_get_or_create_returns_the_open_log(tmp_path: Path, clock: FakeClock) -> None:
    manager = LogManager(tmp_path, clock=clock)
    assert manager.get("t", 0) is None
    created = manager.get_or_create("t", 0, LogConfig())
    assert manager.get_or_create("t", 0, LogConfig()) is created
    assert manager.get("t", 0) is created
    manager.close_all()


def test_delete_removes_the_partition_and_its_files(tmp_path: Path, clock: FakeClock) -> None:
    manager = LogManager(tmp_path, clock=clock)
    manager.get_or_create("t", 0, LogConfig()).append_as_leader(build_batch(1), 0)
    manager.get_or_create("t", 1, LogConfig())

    manager.delete("t", 0)

    assert manager.get("t", 0) is None
    assert not (tmp_path / "t-0").exists()
    assert (tmp_path / "t-1").exists()
    manager.close_all()


def test_update_config_applies_to_every_partition_of_the_topic(
    tmp_path: Path, clock: FakeClock
) -> None:
    manager = LogManager(tmp_path, clock=clock)
    for partition in (0, 1):
        manager.get_or_create("t", partition, LogConfig())
    other = manager.get_or_create("u", 0, LogConfig())
    small = LogConfig(segment_bytes=len(build_batch(1)))

    manager.update_config("t", small)
    log = manager.get("t", 1)
    assert log is not None
    for _ in range(2):
        log.append_as_leader(build_batch(1), 0)

    assert log.segment_count == 2
    assert other.config == LogConfig()
    manager.close_all()
