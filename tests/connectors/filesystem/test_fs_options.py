"""Filesystem connector configuration: Flink's option names, defaults, and errors that name the option."""

from __future__ import annotations

import re
import uuid

import pytest

from kindling import FileSink, OptionError, Sink
from kindling.connectors.filesystem.buckets import escape_path_value, java_pattern_to_strftime, parse_partition_path
from kindling.connectors.filesystem.options import sink_config, source_config
from kindling.connectors.filesystem.partition_commit import partition_time_ms


def test_defaults_are_flinks(tmp_path):
    config = sink_config({"path": str(tmp_path), "format": "parquet"})
    assert config.file_size == 128 * 1024 * 1024
    assert config.rollover_interval_ms == 30 * 60_000 and config.inactivity_interval_ms == 30 * 60_000
    assert config.compression == "SNAPPY" and config.commit_trigger == "process-time"
    assert config.compaction_file_size == config.file_size and not config.auto_compaction
    assert config.part_prefix == "part" and config.part_suffix == ".parquet"
    assert sink_config({"path": str(tmp_path), "format": "csv", "sink.part-suffix": ".txt"}).part_suffix == ".txt"
    assert source_config({"path": str(tmp_path), "format": "json"}).monitor_interval_ms is None
    assert source_config({"path": str(tmp_path), "format": "json", "source.monitor-interval": "10 s"}).monitor_interval_ms == 10_000


@pytest.mark.parametrize("options, option", [
    ({"format": "orc"}, "'format'"),
    ({"format": None}, "'format'"),
    ({"parquet.compression": "LZO"}, "'parquet.compression'"),
    ({"sink.rolling-policy.file-size": "lots"}, "'sink.rolling-policy.file-size'"),
    ({"sink.rolling-policy.rolover-interval": "1 min"}, "did you mean 'sink.rolling-policy.rollover-interval'"),
    ({"sink.partition-commit.policy.kind": "carrier-pigeon"}, "'sink.partition-commit.policy.kind'"),
    ({"sink.bucket-assigner": "datetime", "sink.bucket-assigner.format": "yyyy-QQ"}, "'sink.bucket-assigner.format'"),
    ({"s3.access-key": "only-half"}, "'s3.secret-key'"),
    ({"s3.entropy.key": "_e_"}, "'s3.entropy.key'"),
    ({"sink.part-prefix": ".hidden"}, "'sink.part-prefix'"),
])
def test_bad_configuration_fails_naming_the_option(tmp_path, options, option):
    raw = {"path": str(tmp_path), "format": "parquet", **options}
    raw = {k: v for k, v in raw.items() if v is not None}
    with pytest.raises(OptionError, match=re.escape(option)):
        Sink("filesystem", raw)


def test_builder_turns_into_flink_options(tmp_path):
    sink = (FileSink.for_row_format(str(tmp_path), "csv").with_partition_keys("dt", "hour").with_compaction("1 mb")
            .with_partition_commit("partition-time", "1 h", "$dt $hour:00:00").build())
    assert sink.connector == "filesystem"
    assert sink.options["format"] == "csv" and sink.options["kindling.table.partition-keys"] == "dt;hour"
    assert sink.options["auto-compaction"] == "true" and sink.options["compaction.file-size"] == "1 mb"
    assert sink.options["sink.partition-commit.policy.kind"] == "success-file"
    with pytest.raises(ValueError, match="bulk format"):
        FileSink.for_bulk_format(str(tmp_path), "avro")


def test_java_date_time_patterns():
    assert java_pattern_to_strftime("'year='yyyy/'month='MM/'day='dd/'hour='HH") == "year=%Y/month=%m/day=%d/hour=%H"
    assert java_pattern_to_strftime("yyyy-MM-dd--HH") == "%Y-%m-%d--%H"
    assert java_pattern_to_strftime("yyyy-MM-dd HH:mm:ss") == "%Y-%m-%d %H:%M:%S"
    with pytest.raises(ValueError, match="unsupported"):
        java_pattern_to_strftime("EEE")


def test_partition_paths_and_times(tmp_path):
    assert escape_path_value("a/b=c:d") == "a%2Fb%3Dc%3Ad"
    assert parse_partition_path("dt=2024-01-01/k=a%2Fb") == {"dt": "2024-01-01", "k": "a/b"}
    config = sink_config({"path": str(tmp_path), "format": "json", "partition.time-extractor.timestamp-pattern": "$dt $hour:00:00"})
    assert partition_time_ms(config, "dt=2024-01-01/hour=10") == 1704103200000
    plain = sink_config({"path": str(tmp_path), "format": "json"})
    assert partition_time_ms(plain, "dt=2024-01-02") == 1704153600000  # the first field, as a date
    with pytest.raises(ValueError, match="timestamp-pattern"):
        partition_time_ms(config, "dt=yesterday/hour=x")


@pytest.mark.integration
def test_unreachable_endpoint_and_wrong_credentials_fail_at_start(s3):
    bucket = f"cfg-{uuid.uuid4().hex[:8]}"
    s3.create_bucket(bucket)
    good = {"path": f"s3://{bucket}/t", "format": "parquet", **s3.options()}
    Sink("filesystem", good)  # reaches the server
    with pytest.raises(OptionError, match=r"'s3\.access-key'/'s3\.secret-key'.*refused"):
        Sink("filesystem", {**good, "s3.secret-key": "wrong"})
    with pytest.raises(OptionError, match=r"'s3\.endpoint'.*cannot be reached"):
        Sink("filesystem", {**good, "s3.endpoint": "http://127.0.0.1:9"})
    assert "wrong" not in repr(sink_config({**good, "s3.secret-key": "wrong"}))  # secrets stay out of logs
