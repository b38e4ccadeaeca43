"""A partition's fetch stamp: fetch sessions skip a partition whose last answer left
nothing to send while its stamp stands, so every change a fetch could show must move it,
and reads must not."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from partition_testing import one_record_batch

from odradek.broker.cluster.metadata_image import PartitionState
from odradek.broker.cluster.partition import Partition, PartitionKey
from odradek.broker.log import LogConfig, PartitionLog

NODE = 0
REPLICAS = (NODE, 1)


def leader_of_three_records(tmp_path: Path) -> Partition:
    """Leader in epoch 1 with broker 1 in sync; three records, the first two replicated."""
    log = PartitionLog.open(tmp_path / "t-0", LogConfig())
    partition = Partition(
        PartitionKey("t", 0), log, PartitionState(0, REPLICAS, NODE, 1, REPLICAS), NODE
    )
    for _ in range(3):
        partition.append_as_leader(one_record_batch(), -1, 1)
    partition.record_follower_fetch(1, 2)
    assert (partition.high_watermark, partition.log_end_offset) == (2, 3)
    return partition


def appended(partition: Partition, tmp_path: Path) -> None:
    partition.append_as_leader(one_record_batch(), -1, 1)


def replicated(partition: Partition, tmp_path: Path) -> None:
    partition.record_follower_fetch(1, 3)  # the high watermark moves, nothing else


def records_deleted(partition: Partition, tmp_path: Path) -> None:
    partition.delete_records_before(1)


def truncated(partition: Partition, tmp_path: Path) -> None:
    partition.apply_state(PartitionState(0, REPLICAS, 1, 2, REPLICAS))
    partition.truncate_to_leader(-1, 0)  # to the high watermark


def led_elsewhere(partition: Partition, tmp_path: Path) -> None:
    partition.apply_state(PartitionState(0, REPLICAS, 1, 2, REPLICAS))


def isr_shrunk(partition: Partition, tmp_path: Path) -> None:
    partition.apply_state(PartitionState(0, REPLICAS, NODE, 1, (NODE,)))


def fenced(partition: Partition, tmp_path: Path) -> None:
    partition.fenced = True


def dir_failed(partition: Partition, tmp_path: Path) -> None:
    partition.log.failures.fail(partition.log.directory.parent, "a write", OSError(5, "EIO"))


def log_moved(partition: Partition, tmp_path: Path) -> None:
    moved = PartitionLog.open(tmp_path / "other" / "t-0", LogConfig())
    partition.adopt_moved_log(moved)


@pytest.mark.parametrize(
    "change",
    [
        appended,
        replicated,
        records_deleted,
        truncated,
        led_elsewhere,
        isr_shrunk,
        fenced,
        dir_failed,
        log_moved,
    ],
)
def test_every_change_a_fetch_can_show_moves_the_stamp(
    tmp_path: Path, change: Callable[[Partition, Path], None]
) -> None:
    partition = leader_of_three_records(tmp_path)
    before = {rc: partition.fetch_stamp(rc) for rc in (False, True)}
    change(partition, tmp_path)
    for read_committed, stamp in before.items():
        assert partition.fetch_stamp(read_committed) != stamp, change.__name__


def test_reads_leave_the_stamp_as_it_was(tmp_path: Path) -> None:
    partition = leader_of_three_records(tmp_path)
    before = {rc: partition.fetch_stamp(rc) for rc in (False, True)}
    for offset in range(4):
        partition.read(offset, 1 << 20, committed_only=True)
        partition.read(offset, 1 << 20, committed_only=False)
        partition.read(offset, 1 << 20, committed_only=True, read_committed=True)
    partition.record_follower_fetch(1, 2)  # a follower fetching where it was
    assert {rc: partition.fetch_stamp(rc) for rc in (False, True)} == before
