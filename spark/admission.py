"""How far a micro-batch may read when ``maxOffsetsPerTrigger`` bounds it."""

from __future__ import annotations

from collections.abc import Mapping

from odradek.spark.offsets import PartitionOffsets, TopicPartition


def admit(
    start: Mapping[TopicPartition, int],
    latest: Mapping[TopicPartition, int],
    max_records: int,
) -> PartitionOffsets:
    """End offsets that admit at most ``max_records`` records in total.

    The budget is shared in proportion to each partition's backlog (largest
    remainders get the leftover records), so no partition starves; when the
    backlog fits, every partition reads to its latest offset. Partitions of
    ``latest`` missing from ``start`` are not read.
    """
    backlog = {tp: max(0, latest[tp] - start[tp]) for tp in latest if tp in start}
    total = sum(backlog.values())
    if total <= max_records:
        return {tp: start[tp] + size for tp, size in backlog.items()}
    shares = {tp: size * max_records // total for tp, size in backlog.items()}
    leftover = max_records - sum(shares.values())
    by_remainder = sorted(backlog, key=lambda tp: (-(backlog[tp] * max_records % total), tp))
    for tp in by_remainder[:leftover]:
        shares[tp] += 1
    return {tp: start[tp] + share for tp, share in shares.items()}
