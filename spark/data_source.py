"""The ``odradek`` format: Spark 4 Python data source over the Kafka protocol.

``register(spark)`` makes ``spark.read.format("odradek")``, ``readStream``,
``write`` and ``writeStream`` available in a session.
"""

from __future__ import annotations

from pyspark.sql import SparkSession
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import StructType

from odradek.spark.batch_reader import BatchReader
from odradek.spark.options import OptionError, ReadOptions, parse_read_options, parse_write_options
from odradek.spark.partition_reader import ReaderSettings
from odradek.spark.record_schema import ddl_schema
from odradek.spark.sink_columns import check_sink_columns
from odradek.spark.stream_reader import StreamReader
from odradek.spark.writer import BatchWriter, StreamWriter

FORMAT = "odradek"


class OdradekDataSource(DataSource):  # type: ignore[misc]
    @classmethod
    def name(cls) -> str:
        return FORMAT

    def schema(self) -> str:
        include_headers = str(self.options.get("includeHeaders", "false")).lower() == "true"
        return ddl_schema(include_headers)

    def reader(self, schema: StructType) -> DataSourceReader:
        options = parse_read_options(self.options, streaming=False)
        return BatchReader(options, _reader_settings(options))

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:
        options = parse_read_options(self.options, streaming=True)
        return StreamReader(options, _reader_settings(options))

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        if overwrite:
            raise OptionError("save mode overwrite is not supported: topics are append-only")
        options = parse_write_options(self.options)
        check_sink_columns(_column_types(schema), options.topic)
        return BatchWriter(options)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:
        options = parse_write_options(self.options)
        check_sink_columns(_column_types(schema), options.topic)
        return StreamWriter(options)


def register(spark: SparkSession) -> None:
    """Make format ``odradek`` available in ``spark``."""
    spark.dataSource.register(OdradekDataSource)


def _reader_settings(options: ReadOptions) -> ReaderSettings:
    return ReaderSettings(
        bootstrap_servers=options.bootstrap_servers,
        client_settings=options.client_settings,
        include_headers=options.include_headers,
        fail_on_data_loss=options.fail_on_data_loss,
        poll_timeout_ms=options.poll_timeout_ms,
    )


def _column_types(schema: StructType) -> dict[str, str]:
    return {f.name: f.dataType.simpleString() for f in schema.fields}
