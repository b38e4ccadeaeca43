"""Split a batch's offsets into Spark input partitions, as Spark's Kafka source does.

One range per topic-partition; when ``minPartitions`` asks for more ranges than
there are topic-partitions, the larger ranges are cut into pieces in proportion
to their size so the reads stay balanced.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass

from odradek.spark.offsets import TopicPartition


@dataclass(frozen=True)
class OffsetRange:
    """Records ``[start, end)`` of one topic-partition."""

    topic: str
    partition: int
    start: int
    end: int

    @property
    def size(self) -> int:
        return self.end - self.start


def plan_ranges(
    start: Mapping[TopicPartition, int],
    end: Mapping[TopicPartition, int],
    min_partitions: int | None = None,
) -> list[OffsetRange]:
    """Non-empty ranges covering ``[start[tp], end[tp])`` for every tp in ``end``.

    Partitions missing from ``start`` or with nothing to read are left out. With
    ``min_partitions``, ranges are split until there are at least that many (as
    far as there are records to split).
    """
    ranges = [
        OffsetRange(tp.topic, tp.partition, start[tp], end[tp])
        for tp in sorted(end)
        if tp in start and end[tp] > start[tp]
    ]
    if min_partitions is None or len(ranges) >= min_partitions:
        return ranges
    total = sum(r.size for r in ranges)
    result: list[OffsetRange] = []
    for r in ranges:
        # ceil(size / total * min_partitions) pieces, at most one per record.
        pieces = min(r.size, max(1, -(-r.size * min_partitions // total)))
        result.extend(_split(r, pieces))
    return result


def _split(r: OffsetRange, pieces: int) -> list[OffsetRange]:
    bounds = [r.start + r.size * i // pieces for i in range(pieces + 1)]
    return [OffsetRange(r.topic, r.partition, a, b) for a, b in itertools.pairwise(bounds)]
