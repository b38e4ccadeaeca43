"""One Spark input partition: an offset range of one topic-partition."""

from __future__ import annotations

from pyspark.sql.datasource import InputPartition

from odradek.spark.range_planning import OffsetRange


class OffsetRangePartition(InputPartition):  # type: ignore[misc]
    def __init__(self, offset_range: OffsetRange) -> None:
        super().__init__(offset_range)
        self.offset_range = offset_range
