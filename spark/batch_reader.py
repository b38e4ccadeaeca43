"""Batch reads: resolve ``startingOffsets``/``endingOffsets`` once, then read the ranges."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition

from odradek.spark import data_loss
from odradek.spark.input_partition import OffsetRangePartition
from odradek.spark.offset_lookup import OffsetLookup
from odradek.spark.offset_resolution import resolve_offsets
from odradek.spark.offsets import PartitionOffsets, TopicPartition
from odradek.spark.options import AtTimestamp, OffsetSpec, ReadOptions
from odradek.spark.partition_reader import ReaderSettings, read_range
from odradek.spark.range_planning import plan_ranges


class BatchReader(DataSourceReader):  # type: ignore[misc]
    def __init__(self, options: ReadOptions, settings: ReaderSettings) -> None:
        self.options = options
        self.settings = settings

    def partitions(self) -> Sequence[InputPartition]:
        lookup = OffsetLookup(self.options.bootstrap_servers, self.options.client_settings)
        tps = lookup.partitions(self.options.subscription)
        earliest = lookup.earliest(tps)
        start = resolve_spec(lookup, self.options, self.options.starting, "startingOffsets", tps)
        end = resolve_spec(lookup, self.options, self.options.ending, "endingOffsets", tps)
        start = data_loss.reconcile_starts(start, earliest, self.options.fail_on_data_loss)
        ranges = plan_ranges(start, end, self.options.min_partitions)
        return [OffsetRangePartition(r) for r in ranges]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, OffsetRangePartition)
        return read_range(partition.offset_range, self.settings)


def resolve_spec(
    lookup: OffsetLookup,
    options: ReadOptions,
    spec: OffsetSpec,
    option: str,
    tps: Sequence[TopicPartition],
) -> PartitionOffsets:
    """Look up what ``spec`` needs and resolve it for ``tps``."""
    by_timestamp = (
        lookup.at_timestamp(tps, spec.timestamp_ms) if isinstance(spec, AtTimestamp) else None
    )
    return resolve_offsets(
        spec,
        option,
        tps,
        lookup.earliest(tps),
        lookup.latest(tps),
        by_timestamp,
        options.timestamp_strategy,
    )
