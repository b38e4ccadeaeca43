"""Replica logs read straight from the brokers' data dirs, to prove replicas never diverge.

A partition replica is ``<log.dirs>/<topic>-<partition>/`` holding segments
``<20-digit base offset>.log`` of v2 record batches as stored. Reading the
files (rather than fetching) sees exactly what each broker would serve or
truncate, including batches above the high watermark.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import zip_longest
from pathlib import Path
from typing import NamedTuple

from cluster_harness import Cluster
from kafka_wire import parse_batches


def stored_batches(data_dir: Path, topic: str, partition: int) -> dict[int, bytes]:
    """Every whole batch of one replica, by base offset, in offset order."""
    directory = data_dir / f"{topic}-{partition}"
    batches: dict[int, bytes] = {}
    for segment in sorted(directory.glob("*.log"), key=lambda path: int(path.stem)):
        data = segment.read_bytes()
        found, _ = parse_batches(data)
        for batch in found:
            batches[batch.base_offset] = data[batch.position : batch.position + batch.size]
    return batches


def offset_after(base_offset: int, batch: bytes) -> int:
    """The offset after a stored batch's last record (its header's last offset delta)."""
    return base_offset + int.from_bytes(batch[23:27], "big", signed=True) + 1


def replicas_summary(cluster: Cluster, topic: str, partitions: int) -> str:
    """Each partition's leader, ISR and every replica's stored log end, for a failure's
    message."""
    lines = []
    for partition in range(partitions):
        info = cluster.partition(topic, partition)
        ends = {}
        for replica in info.replicas:
            batches = stored_batches(cluster.brokers[replica].data_dir, topic, partition)
            last = max(batches, default=None)
            ends[replica] = 0 if last is None else offset_after(last, batches[last])
        lines.append(f"{topic}-{partition}: leader {info.leader}, ISR {info.isr}, ends {ends}")
    return "\n".join(lines)


class BatchProducer(NamedTuple):
    producer_id: int
    epoch: int
    base_sequence: int


def batch_producer(batches: dict[int, bytes], offset: int) -> BatchProducer:
    """Who wrote the stored batch holding ``offset``: its v2 header's producer id, producer
    epoch and base sequence."""
    data = batches[max(base for base in batches if base <= offset)]
    return BatchProducer(
        int.from_bytes(data[43:51], "big", signed=True),
        int.from_bytes(data[51:53], "big", signed=True),
        int.from_bytes(data[53:57], "big", signed=True),
    )


def batch_producers(data_dir: Path, topic: str) -> Callable[[int, int], BatchProducer]:
    """``batch_producer`` of (partition, offset) in the replicas of ``topic`` under
    ``data_dir``."""
    return lambda partition, offset: batch_producer(
        stored_batches(data_dir, topic, partition), offset
    )


def committed_batches(batches: dict[int, bytes], high_watermark: int) -> list[tuple[int, bytes]]:
    """The batches below ``high_watermark``, checked to be contiguous from offset 0."""
    kept: list[tuple[int, bytes]] = []
    expected = 0
    for base_offset in sorted(batches):
        if base_offset >= high_watermark:
            break
        assert base_offset == expected, f"gap: batch at {base_offset}, expected {expected}"
        expected = offset_after(base_offset, batches[base_offset])
        kept.append((base_offset, batches[base_offset]))
    assert expected == high_watermark, f"batches end at {expected}, high watermark {high_watermark}"
    return kept


def assert_replicas_identical(cluster: Cluster, topic: str, partitions: int) -> dict[int, int]:
    """Every in-sync replica holds byte-identical batches from 0 up to the high watermark;
    returns the high watermark of each partition."""
    high_watermarks = {}
    for partition in range(partitions):
        info = cluster.partition(topic, partition)
        high_watermark = cluster.high_watermark(topic, partition)
        high_watermarks[partition] = high_watermark
        logs = {}
        for replica in info.isr:
            stored = stored_batches(cluster.brokers[replica].data_dir, topic, partition)
            try:
                logs[replica] = committed_batches(stored, high_watermark)
            except AssertionError as error:
                raise AssertionError(f"{topic}-{partition} on broker {replica}: {error}") from None
        reference = logs[info.leader]
        for replica, batches in logs.items():
            if batches != reference:
                first = next(
                    (mine or theirs)[0]  # type: ignore[index]
                    for mine, theirs in zip_longest(batches, reference)
                    if mine != theirs
                )
                raise AssertionError(
                    f"{topic}-{partition}: replica {replica} differs from leader {info.leader} "
                    f"below the high watermark {high_watermark}, first at offset {first}"
                )
    return high_watermarks
