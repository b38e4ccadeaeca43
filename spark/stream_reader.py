"""Streaming reads: micro-batches of offset ranges, offsets kept in Spark's checkpoint.

The reader lives in one Python process on the driver for the whole query, so
the admin client and the ``Trigger.AvailableNow`` target persist between calls.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)

from odradek.spark import data_loss
from odradek.spark.admission import admit
from odradek.spark.batch_reader import resolve_spec
from odradek.spark.input_partition import OffsetRangePartition
from odradek.spark.offset_lookup import OffsetLookup
from odradek.spark.offsets import OffsetsJson, PartitionOffsets, from_json, to_json
from odradek.spark.options import ReadOptions
from odradek.spark.partition_reader import ReaderSettings, read_range
from odradek.spark.range_planning import plan_ranges


class StreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):  # type: ignore[misc]
    def __init__(self, options: ReadOptions, settings: ReaderSettings) -> None:
        self.options = options
        self.settings = settings
        self._lookup: OffsetLookup | None = None
        self._available_now_target: PartitionOffsets | None = None

    @property
    def lookup(self) -> OffsetLookup:
        # Made on first use: the reader is pickled to executors, an admin client is not.
        if self._lookup is None:
            self._lookup = OffsetLookup(
                self.options.bootstrap_servers, self.options.client_settings
            )
        return self._lookup

    def initialOffset(self) -> OffsetsJson:
        tps = self.lookup.partitions(self.options.subscription)
        return to_json(
            resolve_spec(self.lookup, self.options, self.options.starting, "startingOffsets", tps)
        )

    def getDefaultReadLimit(self) -> ReadLimit:
        limit = self.options.max_offsets_per_trigger
        return ReadAllAvailable() if limit is None else ReadMaxRows(limit)

    def latestOffset(self, start: OffsetsJson, limit: ReadLimit) -> OffsetsJson:
        begin = self._starts(from_json(start))
        latest = self._latest()
        data_loss.check_ends(begin, latest, self.options.fail_on_data_loss)
        if isinstance(limit, ReadMaxRows):
            return to_json(admit(begin, latest, limit.max_rows))
        return to_json(latest)

    def reportLatestOffset(self) -> OffsetsJson:
        return to_json(self._latest())

    def prepareForTriggerAvailableNow(self) -> None:
        self._available_now_target = self._current_latest()

    def partitions(self, start: OffsetsJson, end: OffsetsJson) -> Sequence[InputPartition]:
        begin = self._starts(from_json(start))
        ranges = plan_ranges(begin, from_json(end), self.options.min_partitions)
        return [OffsetRangePartition(r) for r in ranges]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, OffsetRangePartition)
        return read_range(partition.offset_range, self.settings)

    def _starts(self, checkpointed: PartitionOffsets) -> PartitionOffsets:
        """Checkpointed starts, with new partitions added and deleted records skipped."""
        tps = self.lookup.partitions(self.options.subscription)
        earliest = self.lookup.earliest(tps)
        return data_loss.reconcile_starts(checkpointed, earliest, self.options.fail_on_data_loss)

    def _latest(self) -> PartitionOffsets:
        """Latest offsets, capped at the target once ``Trigger.AvailableNow`` set one."""
        latest = self._current_latest()
        target = self._available_now_target
        if target is None:
            return latest
        return {tp: min(offset, target[tp]) for tp, offset in latest.items() if tp in target}

    def _current_latest(self) -> PartitionOffsets:
        return self.lookup.latest(self.lookup.partitions(self.options.subscription))
