"""Decide what to do when offsets a query planned to read are gone (``failOnDataLoss``).

Records disappear when retention or DeleteRecords moves a log start offset past
them, when a topic is deleted, or when a partition is recreated with fewer
records. With ``failOnDataLoss`` (the default) the query fails with a sentence
saying what was lost; without it the loss is logged and reading goes on from what
remains.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from odradek.spark.offsets import PartitionOffsets, TopicPartition

log = logging.getLogger(__name__)

_ADVICE = (
    " Some data may have been lost: records were deleted (retention, DeleteRecords) or the "
    "topic was deleted or recreated. If that is expected, set the option failOnDataLoss to "
    "false."
)


class DataLossError(RuntimeError):
    """Records the query should read no longer exist."""


def report(message: str, fail: bool) -> None:
    """Fail with ``message`` or log it, per ``failOnDataLoss``."""
    if fail:
        raise DataLossError(message + _ADVICE)
    log.warning("%s; going on (failOnDataLoss=false)", message)


def reconcile_starts(
    start: Mapping[TopicPartition, int],
    earliest: Mapping[TopicPartition, int],
    fail: bool,
) -> PartitionOffsets:
    """Starts moved up to each partition's log start offset where records were deleted.

    Partitions of ``start`` absent from ``earliest`` (deleted) are reported and
    dropped; partitions of ``earliest`` absent from ``start`` (new) start at their
    log start offset, which loses nothing only if that is 0.
    """
    result: PartitionOffsets = {}
    for tp in sorted(start.keys() | earliest.keys()):
        if tp not in earliest:
            report(f"{tp} was to be read from offset {start[tp]} but no longer exists.", fail)
        elif tp not in start:
            if earliest[tp] > 0:
                report(f"new partition {tp} starts at offset {earliest[tp]}, not 0.", fail)
            result[tp] = earliest[tp]
        elif start[tp] < earliest[tp]:
            report(
                f"{tp}: offsets {start[tp]} to {earliest[tp] - 1} were deleted before they "
                "were read.",
                fail,
            )
            result[tp] = earliest[tp]
        else:
            result[tp] = start[tp]
    return result


def check_ends(
    start: Mapping[TopicPartition, int],
    end: Mapping[TopicPartition, int],
    fail: bool,
) -> None:
    """Report partitions whose end fell below their start (deleted and recreated).

    Such a partition reads nothing in this batch and goes on from its new end.
    """
    for tp in sorted(end.keys() & start.keys()):
        if end[tp] < start[tp]:
            report(f"{tp}: its end offset went back from {start[tp]} to {end[tp]}.", fail)
