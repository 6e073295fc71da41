"""Flink-style builders for the DataStream API: ``FileSink`` and ``FileSource``.

>>> sink = (FileSink.for_bulk_format("s3://lake/clicks", "parquet")
...     .with_rolling_policy(RollingPolicy.default_rolling_policy(part_size="64 mb"))
...     .with_output_file_config(OutputFileConfig.builder().with_part_prefix("clicks").build())
...     .with_bucket_assigner(DateTimeBucketAssigner("'dt='yyyy-MM-dd/'hour='HH", timestamp_field="ts"))
...     .with_s3(endpoint="http://127.0.0.1:8333", access_key="...", secret_key="...")
...     .build())
>>> source = FileSource.for_bulk_file_format("parquet", "s3://lake/clicks").monitor_continuously("10 s").build()

Each builder turns into the filesystem connector's Flink SQL options, so a builder and a
``CREATE TABLE ... WITH ('connector' = 'filesystem', ...)`` with the same settings are the same sink.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union

from pyspark.sql.types import StructType

from kindling.connectors.base import TABLE_PARTITION_KEYS, Sink, Source
from kindling.durations import DurationLike
from kindling.unsupported import UnsupportedPyFlinkAPI


def _format_name(value: Any, allowed: tuple[str, ...], what: str) -> str:
    name = str(value if isinstance(value, str) else getattr(value, "format", value)).lower()
    if name not in allowed:
        raise ValueError(f"{what} must be one of {', '.join(allowed)}; got {value!r}")
    return name


class Encoder:
    """Row formats for ``FileSink.for_row_format`` (Flink's ``Encoder``)."""

    def __init__(self, format: str) -> None:
        self.format = format

    @staticmethod
    def json() -> "Encoder":
        return Encoder("json")

    @staticmethod
    def csv() -> "Encoder":
        return Encoder("csv")

    simple_string_encoder = json


@dataclass(frozen=True)
class RollingPolicy:
    """``sink.rolling-policy.*``: when a part file is rolled (Flink's ``DefaultRollingPolicy``)."""

    options: dict = field(default_factory=dict)

    @staticmethod
    def default_rolling_policy(part_size: Union[int, str, None] = None, rollover_interval: Optional[DurationLike] = None,
                               inactivity_interval: Optional[DurationLike] = None) -> "RollingPolicy":
        options: dict[str, Any] = {}
        if part_size is not None:
            options["sink.rolling-policy.file-size"] = part_size
        if rollover_interval is not None:
            options["sink.rolling-policy.rollover-interval"] = rollover_interval
        if inactivity_interval is not None:
            options["sink.rolling-policy.inactivity-interval"] = inactivity_interval
        return RollingPolicy(options)

    @staticmethod
    def on_checkpoint_rolling_policy() -> "RollingPolicy":
        return RollingPolicy({"sink.rolling-policy.rollover-interval": "0 ms"})


@dataclass(frozen=True)
class OutputFileConfig:
    """Part file name prefix and suffix (``sink.part-prefix`` / ``sink.part-suffix``)."""

    part_prefix: str = "part"
    part_suffix: Optional[str] = None

    @staticmethod
    def builder() -> "_OutputFileConfigBuilder":
        return _OutputFileConfigBuilder()


class _OutputFileConfigBuilder:
    def __init__(self) -> None:
        self._prefix, self._suffix = "part", None

    def with_part_prefix(self, prefix: str) -> "_OutputFileConfigBuilder":
        self._prefix = prefix
        return self

    def with_part_suffix(self, suffix: str) -> "_OutputFileConfigBuilder":
        self._suffix = suffix
        return self

    def build(self) -> OutputFileConfig:
        return OutputFileConfig(self._prefix, self._suffix)


@dataclass(frozen=True)
class DateTimeBucketAssigner:
    """Flink's ``DateTimeBucketAssigner``: buckets named by a Java date-time pattern.

    From processing time by default, or from a TIMESTAMP field of the record.
    """

    format_string: str = "yyyy-MM-dd--HH"
    zone_id: str = "UTC"
    timestamp_field: Optional[str] = None

    def options(self) -> dict[str, str]:
        options = {"sink.bucket-assigner": "datetime", "sink.bucket-assigner.format": self.format_string,
                   "sink.bucket-assigner.time-zone": self.zone_id}
        if self.timestamp_field:
            options["sink.bucket-assigner.timestamp-field"] = self.timestamp_field
        return options


class FileSinkBuilder:
    def __init__(self, path: str, format: str) -> None:
        self._options: dict[str, Any] = {"path": path, "format": format}

    def with_rolling_policy(self, policy: RollingPolicy) -> "FileSinkBuilder":
        self._options.update(policy.options)
        return self

    def with_output_file_config(self, config: OutputFileConfig) -> "FileSinkBuilder":
        self._options["sink.part-prefix"] = config.part_prefix
        if config.part_suffix is not None:
            self._options["sink.part-suffix"] = config.part_suffix
        return self

    def with_bucket_assigner(self, assigner: DateTimeBucketAssigner) -> "FileSinkBuilder":
        self._options.update(assigner.options())
        return self

    def with_partition_keys(self, *columns: str) -> "FileSinkBuilder":
        """``col=value/`` directories, as ``PARTITIONED BY`` in SQL (the columns leave the files)."""
        self._options[TABLE_PARTITION_KEYS] = ";".join(columns)
        return self

    def with_compaction(self, file_size: Union[int, str, None] = None) -> "FileSinkBuilder":
        self._options["auto-compaction"] = True
        if file_size is not None:
            self._options["compaction.file-size"] = file_size
        return self

    def with_partition_commit(self, trigger: str = "process-time", delay: DurationLike = "0 s",
                              timestamp_pattern: Optional[str] = None) -> "FileSinkBuilder":
        """Write ``_SUCCESS`` into a partition once it is complete."""
        self._options.update({"sink.partition-commit.trigger": trigger, "sink.partition-commit.delay": delay,
                              "sink.partition-commit.policy.kind": "success-file"})
        if timestamp_pattern:
            self._options["partition.time-extractor.timestamp-pattern"] = timestamp_pattern
        return self

    def with_s3(self, endpoint: Optional[str] = None, access_key: Optional[str] = None, secret_key: Optional[str] = None,
                path_style_access: Optional[bool] = None, region: Optional[str] = None) -> "FileSinkBuilder":
        _s3_options(self._options, endpoint, access_key, secret_key, path_style_access, region)
        return self

    def with_entropy_injection(self, key: str, length: int = 4) -> "FileSinkBuilder":
        self._options.update({"s3.entropy.key": key, "s3.entropy.length": length})
        return self

    def with_option(self, key: str, value: Any) -> "FileSinkBuilder":
        """Any filesystem sink option by its Flink name (``parquet.compression``, ...)."""
        self._options[key] = value
        return self

    def build(self) -> Sink:
        return Sink("filesystem", dict(self._options))


class FileSink:
    """Flink's ``FileSink``: exactly-once part files in a directory or bucket."""

    @staticmethod
    def for_row_format(base_path: str, encoder: Union[Encoder, str]) -> FileSinkBuilder:
        return FileSinkBuilder(base_path, _format_name(encoder, ("json", "csv"), "a row format"))

    @staticmethod
    def for_bulk_format(base_path: str, writer_factory: Any = "parquet") -> FileSinkBuilder:
        builder = FileSinkBuilder(base_path, _format_name(writer_factory, ("parquet",), "a bulk format"))
        compression = getattr(writer_factory, "compression", None)
        if compression:
            builder.with_option("parquet.compression", compression)
        return builder


@dataclass(frozen=True)
class ParquetWriters:
    """``FileSink.for_bulk_format(path, ParquetWriters.for_compression("ZSTD"))``."""

    compression: Optional[str] = None
    format: str = "parquet"

    @staticmethod
    def for_compression(codec: str = "SNAPPY") -> "ParquetWriters":
        return ParquetWriters(codec)


class StreamFormat:
    """PyFlink's ``StreamFormat``: how a FileSource reads records from a file's bytes.

    ``StreamFormat.text_line_format()`` reads each line of the files as a ``str`` record (Flink's
    ``TextLineInputFormat``: lines end at ``\\n``, ``\\r`` or ``\\r\\n``, empty lines are records too); it is the
    filesystem connector's ``raw`` format over one STRING column."""

    def __init__(self, format: str) -> None:
        self.format = format

    @staticmethod
    def text_line_format(charset_name: str = "UTF-8") -> "StreamFormat":
        if charset_name.upper().replace("-", "") != "UTF8":
            raise ValueError(f"StreamFormat.text_line_format: kindling reads text files as UTF-8 only, got charset {charset_name!r}")
        return StreamFormat("raw")


class FileSourceBuilder:
    set_file_enumerator = UnsupportedPyFlinkAPI("pyflink.datastream.connectors.file_system.FileSourceBuilder.set_file_enumerator")
    set_split_assigner = UnsupportedPyFlinkAPI("pyflink.datastream.connectors.file_system.FileSourceBuilder.set_split_assigner")

    def __init__(self, path: str, format: str) -> None:
        self._options: dict[str, Any] = {"path": path, "format": format}
        self._schema: Optional[Union[StructType, str]] = None

    def monitor_continuously(self, interval: DurationLike) -> "FileSourceBuilder":
        self._options["source.monitor-interval"] = interval
        return self

    def process_static_file_set(self) -> "FileSourceBuilder":
        """Read the files there when the job starts, then finish (the default; undoes ``monitor_continuously``)."""
        self._options.pop("source.monitor-interval", None)
        return self

    def set_schema(self, schema: Union[StructType, str]) -> "FileSourceBuilder":
        self._schema = schema
        return self

    def with_partition_keys(self, *columns: str) -> "FileSourceBuilder":
        self._options[TABLE_PARTITION_KEYS] = ";".join(columns)
        return self

    def with_s3(self, endpoint: Optional[str] = None, access_key: Optional[str] = None, secret_key: Optional[str] = None,
                path_style_access: Optional[bool] = None, region: Optional[str] = None) -> "FileSourceBuilder":
        _s3_options(self._options, endpoint, access_key, secret_key, path_style_access, region)
        return self

    def with_option(self, key: str, value: Any) -> "FileSourceBuilder":
        self._options[key] = value
        return self

    def build(self) -> Source:
        if self._options["format"] == "raw" and self._schema is None:
            from kindling.common.typeinfo import Types

            lines = Types.STRING()  # text lines: each record is the line, a str, as in PyFlink
            source = Source("filesystem", dict(self._options), lines.record_schema())
            source.type_info = lines  # type: ignore[attr-defined]
            return source
        if self._schema is None:
            raise ValueError("FileSource needs a schema: .set_schema('id BIGINT, name STRING, ...')")
        from kindling.datastream.records import as_struct

        schema = as_struct(self._schema)
        return Source("filesystem", dict(self._options), schema)


class FileSource:
    """Flink's ``FileSource``: the files under a path, bounded or watched continuously."""

    @staticmethod
    def for_record_stream_format(format: Union[StreamFormat, Encoder, str], *paths: str) -> FileSourceBuilder:
        """The records of the files under a path (or of one file): ``StreamFormat.text_line_format()`` (each line a
        ``str``), or kindling's row formats by name, ``'json'`` or ``'csv'`` (with ``set_schema``)."""
        return FileSourceBuilder(_single(paths), _format_name(format, ("raw", "json", "csv"), "a record format"))

    @staticmethod
    def for_bulk_file_format(format: Any, *paths: str) -> FileSourceBuilder:
        return FileSourceBuilder(_single(paths), _format_name(format, ("parquet",), "a bulk format"))


def _single(paths: tuple[str, ...]) -> str:
    if len(paths) != 1:
        raise ValueError(f"FileSource reads one path; got {len(paths)}")
    return paths[0]


def _s3_options(options: dict[str, Any], endpoint, access_key, secret_key, path_style_access, region) -> None:
    for key, value in (("s3.endpoint", endpoint), ("s3.access-key", access_key), ("s3.secret-key", secret_key),
                       ("s3.path.style.access", path_style_access), ("s3.region", region)):
        if value is not None:
            options[key] = value
