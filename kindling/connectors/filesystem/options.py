"""Options of the ``filesystem`` connector: Flink's names and defaults, checked before any Spark job starts.

The option names are Flink's filesystem connector options (``path``, ``format``,
``sink.rolling-policy.*``, ``sink.partition-commit.*``, ``partition.time-extractor.*``,
``auto-compaction``, ``compaction.file-size``, ``source.monitor-interval``) plus Flink's S3
filesystem settings (``s3.endpoint``, ``s3.access-key``, ``s3.secret-key``,
``s3.path.style.access``, ``s3.entropy.key``, ``s3.entropy.length``), given per table here
because Spark has no per-cluster ``flink-conf.yaml`` for them. kindling-specific keys are the
date-time bucket assigner (``sink.bucket-assigner*``) of Flink's DataStream ``FileSink``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Mapping, Optional

from kindling.connectors.base import TABLE_PARTITION_KEYS
from kindling.formats.changelog import CHANGELOG_FORMATS
from kindling.formats.settings import FormatSettings, changelog_options, format_settings
from kindling.object_store import S3_OPTIONS, S3Settings
from kindling.options import (
    OptionError,
    OptionSet,
    ParsedOptions,
    bool_option,
    duration_option,
    enum_option,
    int_option,
    memory_option,
    string_option,
)

FORMATS = ("parquet", "json", "csv", "raw", *CHANGELOG_FORMATS)
ROW_FORMATS = ("json", "csv", "raw", *CHANGELOG_FORMATS)
EXTENSIONS = {"parquet": ".parquet", "json": ".json", "csv": ".csv", "raw": ".txt", **{f: ".json" for f in CHANGELOG_FORMATS}}
CODECS = ("SNAPPY", "ZSTD", "GZIP", "NONE", "UNCOMPRESSED", "LZ4", "BROTLI")
DEFAULT_FILE_SIZE = 128 * 1024 * 1024

_COMMON = (
    string_option("path", None, "The directory to write to or read from: a local path, file://... or s3://bucket/...", required=True),
    enum_option("format", FORMATS, None, "The file format: parquet, json (one object per line), csv (no header), raw (one "
                "STRING or BYTES value per line: Flink's text lines), or a changelog format (debezium-json, canal-json, "
                "maxwell-json: one change envelope per line, read and written with row kinds)."),
    enum_option("parquet.compression", CODECS, "SNAPPY", "Parquet compression codec."),
    string_option("csv.field-delimiter", ",", "CSV field delimiter (one character)."),
    string_option("partition.default-name", "__DEFAULT_PARTITION__", "Directory value for a NULL or empty partition value."),
    *S3_OPTIONS,
    string_option("s3.entropy.key", None, "A marker in the path replaced by random characters in data file paths."),
    int_option("s3.entropy.length", 4, "How many random characters replace s3.entropy.key.", minimum=1),
    *changelog_options(),
)

_SINK_ONLY = (
    memory_option("sink.rolling-policy.file-size", DEFAULT_FILE_SIZE, "Roll a part file once it reaches this size."),
    duration_option("sink.rolling-policy.rollover-interval", timedelta(minutes=30), "Roll a part file at the latest this long after it was opened."),
    duration_option("sink.rolling-policy.inactivity-interval", timedelta(minutes=30), "Roll a part file that received no record for this long."),
    duration_option("sink.rolling-policy.check-interval", timedelta(minutes=1),
                    "How often time-based rolling is checked (at most once per checkpoint here)."),
    string_option("sink.part-prefix", "part", "Part file name prefix."),
    string_option("sink.part-suffix", None, "Part file name suffix; default: the format's extension (.parquet, .json, .csv)."),
    enum_option("sink.partition-commit.trigger", ("process-time", "partition-time"), "process-time", "When a partition is committed."),
    duration_option("sink.partition-commit.delay", timedelta(0), "How long after its time (or creation) a partition is committed."),
    string_option("sink.partition-commit.policy.kind", None, "How a partition is committed: success-file."),
    string_option("sink.partition-commit.success-file.name", "_SUCCESS", "The marker file written by the success-file policy."),
    string_option("sink.partition-commit.watermark-time-zone", "UTC", "Time zone of partition times for partition-time commit."),
    enum_option("partition.time-extractor.kind", ("default",), "default", "How a partition's time is extracted."),
    string_option("partition.time-extractor.timestamp-pattern", None, "Partition time from partition values, e.g. '$dt $hour:00:00'."),
    string_option("partition.time-extractor.timestamp-formatter", "yyyy-MM-dd HH:mm:ss", "Java pattern of the assembled partition time."),
    bool_option("auto-compaction", False, "Merge small files of a partition before they become visible."),
    memory_option("compaction.file-size", None, "Compaction target size; default: sink.rolling-policy.file-size."),
    enum_option("sink.bucket-assigner", ("partition", "datetime"), "partition", "Directory per partition values, or a date-time bucket."),
    string_option("sink.bucket-assigner.format", "yyyy-MM-dd--HH", "Java date-time pattern of datetime buckets."),
    string_option("sink.bucket-assigner.time-zone", "UTC", "Time zone of datetime buckets."),
    string_option("sink.bucket-assigner.timestamp-field", None, "Bucket by this TIMESTAMP field; default: processing time."),
)
_SOURCE_ONLY = (duration_option("source.monitor-interval", None, "Watch the path for new files this often (continuous); unset: bounded."),)

# A SQL table is read and written with the same WITH options (as in Flink): each side accepts the
# other's options and ignores them.
SINK_OPTIONS = OptionSet("filesystem sink", _COMMON + _SINK_ONLY + _SOURCE_ONLY)
SOURCE_OPTIONS = OptionSet("filesystem source", _COMMON + _SINK_ONLY + _SOURCE_ONLY)


@dataclass(frozen=True)
class FileSystemConfig:
    """Everything a filesystem sink or source needs, parsed once from its options."""

    path: str
    format: str
    compression: str
    field_delimiter: str
    default_partition: str
    s3: S3Settings
    entropy_key: Optional[str]
    entropy_length: int
    partition_keys: tuple[str, ...] = ()
    changelog_format: Optional[FormatSettings] = None  # debezium-json, canal-json, maxwell-json and their options
    # sink
    file_size: int = DEFAULT_FILE_SIZE
    rollover_interval_ms: int = 30 * 60_000
    inactivity_interval_ms: int = 30 * 60_000
    check_interval_ms: int = 60_000
    part_prefix: str = "part"
    part_suffix: str = ".parquet"
    commit_trigger: str = "process-time"
    commit_delay_ms: int = 0
    commit_policies: tuple[str, ...] = ()
    success_file_name: str = "_SUCCESS"
    timestamp_pattern: Optional[str] = None
    timestamp_formatter: str = "yyyy-MM-dd HH:mm:ss"
    watermark_time_zone: str = "UTC"
    auto_compaction: bool = False
    compaction_file_size: int = DEFAULT_FILE_SIZE
    bucket_assigner: str = "partition"
    bucket_format: str = "yyyy-MM-dd--HH"
    bucket_time_zone: str = "UTC"
    bucket_timestamp_field: Optional[str] = None
    # source
    monitor_interval_ms: Optional[int] = None


def _millis(value: Optional[timedelta]) -> Optional[int]:
    return None if value is None else int(value / timedelta(milliseconds=1))


def _common(parsed: ParsedOptions, context: str, options: Mapping[str, Any]) -> dict[str, Any]:
    if parsed["format"] is None:
        raise OptionError(f"{context} option 'format' is required; allowed values: " + ", ".join(f"'{f}'" for f in FORMATS))
    path = str(parsed["path"]).strip()
    if not path:
        raise OptionError(f"{context} option 'path' must not be empty")
    delimiter = parsed["csv.field-delimiter"]
    if len(delimiter) != 1:
        raise OptionError(f"{context} option 'csv.field-delimiter' has value {delimiter!r}: expected one character")
    key = parsed.get("s3.entropy.key")
    if key and not path.lower().startswith("s3://"):
        raise OptionError(f"{context} option 's3.entropy.key' applies to s3:// paths only; 'path' is {path!r}")
    partition_keys = tuple(k.strip() for k in parsed.extra.get(TABLE_PARTITION_KEYS, "").split(";") if k.strip())
    access, secret = parsed.get("s3.access-key"), parsed.get("s3.secret-key")
    if bool(access) != bool(secret):
        given, missing = ("s3.access-key", "s3.secret-key") if access else ("s3.secret-key", "s3.access-key")
        raise OptionError(f"{context} option '{given}' is set but '{missing}' is not: give both or neither (AWS credential chain)")
    compression = parsed["parquet.compression"]
    return dict(
        path=path,
        format=parsed["format"],
        compression="NONE" if compression == "UNCOMPRESSED" else compression,
        field_delimiter=delimiter,
        default_partition=parsed["partition.default-name"],
        s3=S3Settings.from_values(parsed.values),
        entropy_key=key or None,
        entropy_length=parsed["s3.entropy.length"],
        partition_keys=partition_keys,
        changelog_format=format_settings(parsed, context, options) if parsed["format"] in CHANGELOG_FORMATS else None,
    )


def sink_config(options: Mapping[str, Any]) -> FileSystemConfig:
    """Validate sink options (unknown keys, bad values, rules between options) into a config."""
    context = "filesystem sink"
    parsed = SINK_OPTIONS.validate(options)
    common = _common(parsed, context, options)
    policies = tuple(p.strip().lower() for p in (parsed.get("sink.partition-commit.policy.kind") or "").split(",") if p.strip())
    for policy in policies:
        if policy not in ("success-file", "metastore"):
            raise OptionError(f"{context} option 'sink.partition-commit.policy.kind' has value {policy!r}; allowed values: 'success-file'")
        if policy == "metastore":
            raise OptionError(f"{context} option 'sink.partition-commit.policy.kind' = 'metastore' needs a Hive metastore, "
                              "which kindling has not; use 'success-file'")
    file_size = parsed["sink.rolling-policy.file-size"]
    if file_size <= 0:
        raise OptionError(f"{context} option 'sink.rolling-policy.file-size' must be positive")
    compaction_size = parsed.get("compaction.file-size") or file_size
    trigger = parsed["sink.partition-commit.trigger"]
    if trigger == "partition-time" and policies and not common["partition_keys"] and parsed["sink.bucket-assigner"] != "datetime":
        raise OptionError(f"{context} option 'sink.partition-commit.trigger' = 'partition-time' needs a partitioned table (PARTITIONED BY)")
    assigner = parsed["sink.bucket-assigner"]
    if assigner == "datetime" and common["partition_keys"]:
        raise OptionError(f"{context} option 'sink.bucket-assigner' = 'datetime' cannot be combined with PARTITIONED BY columns")
    if assigner == "datetime":
        from kindling.connectors.filesystem.buckets import java_pattern_to_strftime

        try:
            java_pattern_to_strftime(parsed["sink.bucket-assigner.format"])
        except ValueError as exc:
            raise OptionError(f"{context} option 'sink.bucket-assigner.format' has value {parsed['sink.bucket-assigner.format']!r}: {exc}") from None
    for key in ("sink.partition-commit.watermark-time-zone", "sink.bucket-assigner.time-zone"):
        _check_zone(parsed[key], key, context)
    suffix = parsed.get("sink.part-suffix")
    prefix = parsed["sink.part-prefix"]
    if not prefix or prefix.startswith((".", "_")) or "/" in prefix:
        raise OptionError(f"{context} option 'sink.part-prefix' has value {prefix!r}: "
                          "it must not be empty, contain '/' or start with '.' or '_' (readers skip such files)")
    return FileSystemConfig(
        **common,
        file_size=file_size,
        rollover_interval_ms=_millis(parsed["sink.rolling-policy.rollover-interval"]) or 0,
        inactivity_interval_ms=_millis(parsed["sink.rolling-policy.inactivity-interval"]) or 0,
        check_interval_ms=_millis(parsed["sink.rolling-policy.check-interval"]) or 0,
        part_prefix=prefix,
        part_suffix=EXTENSIONS[common["format"]] if suffix is None else suffix,
        commit_trigger=trigger,
        commit_delay_ms=_millis(parsed["sink.partition-commit.delay"]) or 0,
        commit_policies=policies,
        success_file_name=parsed["sink.partition-commit.success-file.name"],
        timestamp_pattern=parsed.get("partition.time-extractor.timestamp-pattern"),
        timestamp_formatter=parsed["partition.time-extractor.timestamp-formatter"],
        watermark_time_zone=parsed["sink.partition-commit.watermark-time-zone"],
        auto_compaction=bool(parsed["auto-compaction"]),
        compaction_file_size=compaction_size,
        bucket_assigner=assigner,
        bucket_format=parsed["sink.bucket-assigner.format"],
        bucket_time_zone=parsed["sink.bucket-assigner.time-zone"],
        bucket_timestamp_field=parsed.get("sink.bucket-assigner.timestamp-field"),
    )


def source_config(options: Mapping[str, Any]) -> FileSystemConfig:
    """Validate source options into a config."""
    parsed = SOURCE_OPTIONS.validate(options)
    return FileSystemConfig(**_common(parsed, "filesystem source", options), monitor_interval_ms=_millis(parsed.get("source.monitor-interval")))


def _check_zone(zone: str, key: str, context: str) -> None:
    from zoneinfo import ZoneInfo

    try:
        ZoneInfo(zone)
    except Exception:
        raise OptionError(f"{context} option '{key}' has value {zone!r}: not a time zone (for example 'UTC' or 'Europe/Berlin')") from None
