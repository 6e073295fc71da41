"""The filesystem connector (``'connector' = 'filesystem'``): exactly-once files on a local disk or S3.

* ``options``: Flink's option names, defaults and the rules between them;
* ``storage``: local directories and S3 (pyarrow), staging, publication without listings, entropy;
* ``formats``: parquet, json and csv files from and to Arrow;
* ``buckets``: ``col=value/`` partition directories and the date-time bucket assigner;
* ``sink``: the Arrow stream writer (executors stage files, the driver commits them);
* ``commit_log``: the two-phase commit fenced by batch id, roll-forward and clean-up;
* ``compaction``: rolling of row formats and merging of small files before they become visible;
* ``partition_commit``: ``_SUCCESS`` files by processing time or partition time;
* ``source``: bounded and continuous reading of the same layout;
* ``builder``: Flink's ``FileSink`` / ``FileSource`` for the DataStream API.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from pyspark.sql.datasource import DataSource
from pyspark.sql.types import StructType

from kindling.connectors.base import Connector, spark_format
from kindling.connectors.bounded_read import BoundedReads
from kindling.connectors.filesystem.builder import (
    DateTimeBucketAssigner,
    Encoder,
    FileSink,
    FileSinkBuilder,
    FileSource,
    FileSourceBuilder,
    OutputFileConfig,
    ParquetWriters,
    RollingPolicy,
)
from kindling.connectors.filesystem.options import SINK_OPTIONS, SOURCE_OPTIONS, sink_config, source_config
from kindling.formats.changelog import CHANGELOG_FORMATS
from kindling.options import ParsedOptions


class FileSystemDataSource(BoundedReads, DataSource):
    @classmethod
    def name(cls) -> str:
        return spark_format("filesystem")

    def schema(self) -> StructType:
        raise ValueError("the filesystem source needs a schema (the columns of its files and partitions)")

    def streamWriter(self, schema: StructType, overwrite: bool):
        from kindling.connectors.filesystem.sink import FileStreamWriter

        return FileStreamWriter(dict(self.options), schema)

    def streamReader(self, schema: StructType):
        from kindling.connectors.filesystem.source import FileStreamReader

        return FileStreamReader(dict(self.options), schema)


class FileSystemConnector(Connector):
    name = "filesystem"
    data_source = FileSystemDataSource
    source_options = SOURCE_OPTIONS
    sink_options = SINK_OPTIONS

    @classmethod
    def validate_sink(cls, options: Mapping[str, Any]) -> ParsedOptions:
        from kindling.connectors.filesystem.storage import Storage

        Storage(sink_config(options), attempts=1).check()  # unreachable endpoint, bad credentials: fail now
        return SINK_OPTIONS.validate(options)

    @classmethod
    def validate_source(cls, options: Mapping[str, Any]) -> ParsedOptions:
        from kindling.connectors.filesystem.storage import Storage

        Storage(source_config(options), attempts=1).check(file_allowed=True)
        return SOURCE_OPTIONS.validate(options)

    @classmethod
    def is_bounded(cls, options: ParsedOptions) -> bool:
        return options.get("source.monitor-interval") is None

    @classmethod
    def produces_changelog(cls, options: ParsedOptions) -> bool:
        return options.get("format") in CHANGELOG_FORMATS

    @classmethod
    def needs_retractions(cls, options: Mapping[str, str]) -> bool:
        return options.get("format") in CHANGELOG_FORMATS

    @classmethod
    def consumes_updates(cls, options: Mapping[str, str]) -> bool:
        """Only a changelog format writes updates and deletes (as Flink's filesystem sink does)."""
        return options.get("format") in CHANGELOG_FORMATS

    @classmethod
    def on_bounded_finish(cls, options: Mapping[str, str], checkpoint: Optional[str] = None) -> None:
        """End of a bounded input (Flink's final checkpoint): publish every pending file, commit every partition."""
        from kindling.connectors.filesystem.commit_log import CommitLog
        from kindling.connectors.filesystem.storage import Storage

        config = sink_config(options)
        CommitLog(Storage(config), config, checkpoint).finish()


CONNECTOR = FileSystemConnector

__all__ = [
    "CONNECTOR", "DateTimeBucketAssigner", "Encoder", "FileSink", "FileSinkBuilder", "FileSource", "FileSourceBuilder",
    "FileSystemConnector", "FileSystemDataSource", "OutputFileConfig", "ParquetWriters", "RollingPolicy",
]
