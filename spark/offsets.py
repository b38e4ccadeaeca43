"""Topic-partitions and per-partition offsets, in the JSON form Spark's Kafka source uses.

Offsets travel through Spark's checkpoint as ``{"topic": {"0": 12, "1": 40}}``, the
same shape as Spark's own Kafka source, so they read the same in both.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

EARLIEST = -2
"""In a specific-offsets JSON: start at the partition's log start offset."""
LATEST = -1
"""In a specific-offsets JSON: start (or end) at the partition's high watermark."""


class TopicPartition(NamedTuple):
    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


PartitionOffsets = dict[TopicPartition, int]
OffsetsJson = dict[str, dict[str, int]]


def to_json(offsets: Mapping[TopicPartition, int]) -> OffsetsJson:
    """``{tp: offset}`` -> ``{"topic": {"partition": offset}}``, sorted for stable checkpoints."""
    result: OffsetsJson = {}
    for tp in sorted(offsets):
        result.setdefault(tp.topic, {})[str(tp.partition)] = offsets[tp]
    return result


def from_json(data: Mapping[str, Mapping[str, int]]) -> PartitionOffsets:
    """The inverse of :func:`to_json`."""
    return {
        TopicPartition(topic, int(partition)): int(offset)
        for topic, partitions in data.items()
        for partition, offset in partitions.items()
    }
