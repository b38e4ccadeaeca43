"""Turn an offset spec (earliest, latest, JSON, timestamp) into concrete offsets."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from odradek.spark.offsets import EARLIEST, LATEST, PartitionOffsets, TopicPartition
from odradek.spark.options import (
    AtTimestamp,
    Earliest,
    Latest,
    OffsetSpec,
    OptionError,
    SpecificOffsets,
    TimestampStrategy,
)

NO_OFFSET_FOR_TIMESTAMP = -1
"""What ListOffsets answers when no record has a timestamp at or after the one asked."""


def resolve_offsets(
    spec: OffsetSpec,
    option: str,
    partitions: Sequence[TopicPartition],
    earliest: Mapping[TopicPartition, int],
    latest: Mapping[TopicPartition, int],
    by_timestamp: Mapping[TopicPartition, int] | None = None,
    timestamp_strategy: TimestampStrategy = "error",
) -> PartitionOffsets:
    """One offset per partition in ``partitions``.

    ``earliest``/``latest`` hold each partition's log start offset and high
    watermark; ``by_timestamp`` the ListOffsets answers for an :class:`AtTimestamp`
    spec. ``option`` names the option the spec came from, for errors.
    """
    if isinstance(spec, Earliest):
        return {tp: earliest[tp] for tp in partitions}
    if isinstance(spec, Latest):
        return {tp: latest[tp] for tp in partitions}
    if isinstance(spec, AtTimestamp):
        assert by_timestamp is not None, "AtTimestamp needs the offsets by timestamp"
        return {
            tp: _timestamp_offset(tp, by_timestamp[tp], latest[tp], spec, timestamp_strategy)
            for tp in partitions
        }
    missing = sorted(set(partitions) - set(spec.offsets))
    if missing:
        raise OptionError(
            f"option {option!r} has no offset for {', '.join(map(str, missing))}: "
            "give every partition an offset (-1 for latest, -2 for earliest)"
        )
    return {tp: _specific(spec, tp, earliest, latest) for tp in partitions}


def _specific(
    spec: SpecificOffsets,
    tp: TopicPartition,
    earliest: Mapping[TopicPartition, int],
    latest: Mapping[TopicPartition, int],
) -> int:
    offset = spec.offsets[tp]
    if offset == EARLIEST:
        return earliest[tp]
    if offset == LATEST:
        return latest[tp]
    return offset


def _timestamp_offset(
    tp: TopicPartition,
    found: int,
    latest: int,
    spec: AtTimestamp,
    strategy: TimestampStrategy,
) -> int:
    if found != NO_OFFSET_FOR_TIMESTAMP:
        return found
    if strategy == "latest":
        return latest
    raise OptionError(
        f"option 'startingTimestamp': {tp} has no record at or after {spec.timestamp_ms} ms; "
        "set 'startingOffsetsByTimestampStrategy' to latest to start at its end instead"
    )
