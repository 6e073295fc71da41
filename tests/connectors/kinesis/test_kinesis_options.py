"""Kinesis options without Spark: both dialects, conflicts named, start timestamps, credentials, secrets kept out
of messages; and the driver's first request (unknown stream, wrong endpoint, missing credentials) failing
at start naming the option."""

from __future__ import annotations

import logging

import pytest
from pyspark.sql.types import LongType, StructField, StructType

from kindling.connectors import get_connector
from kindling.connectors.kinesis.options import parse_start_timestamp, sink_config, source_config
from kindling.options import OptionError

BASE = {"stream": "clicks", "format": "json", "aws.region": "us-east-1"}
SCHEMA = StructType([StructField("id", LongType())])


def test_legacy_dialect_defaults_and_values():
    config = source_config({**BASE, "scan.stream.initpos": "TRIM_HORIZON", "scan.shard.getrecords.maxrecordcount": "500",
                            "scan.shard.getrecords.intervalmillis": "100", "scan.shard.discovery.intervalmillis": "2000"})
    assert (config.stream, config.init_position, config.max_records_per_get) == ("clicks", "TRIM_HORIZON", 500)
    assert (config.get_records_interval_ms, config.discovery_interval_ms) == (100, 2000)
    default = source_config(BASE)
    assert (default.init_position, default.publisher, default.max_records_per_get, default.get_records_interval_ms,
            default.discovery_interval_ms, default.idle_interval_ms) == ("LATEST", "POLLING", 10000, 200, 10000, -1)
    assert default.get_records_retry == (3, 300, 1000, 1.5)


def test_new_dialect_reads_the_arn_and_its_region():
    config = source_config({"stream.arn": "arn:aws:kinesis:eu-west-1:123456789012:stream/orders", "format": "raw",
                            "source.init.position": "TRIM_HORIZON", "source.shard.discovery.interval": "3 s"})
    assert (config.stream, config.aws.region, config.init_position, config.discovery_interval_ms) == ("orders", "eu-west-1", "TRIM_HORIZON", 3000)


def test_mixed_dialects_are_refused_naming_one_option_of_each():
    with pytest.raises(OptionError, match=r"'scan.stream.initpos'.*'source.init.position'"):
        source_config({**BASE, "scan.stream.initpos": "LATEST", "source.init.position": "LATEST"})
    with pytest.raises(OptionError, match=r"'stream' .*'stream.arn'"):
        source_config({**BASE, "stream.arn": "arn:aws:kinesis:us-east-1:123456789012:stream/clicks"})
    with pytest.raises(OptionError, match="'source.init.position' belongs to the 5.x"):
        source_config({**BASE, "source.init.position": "LATEST"}, "kinesis-legacy")
    with pytest.raises(OptionError, match="exactly one of 'stream'"):
        source_config({"format": "json", "aws.region": "us-east-1"})


def test_bad_values_name_the_option():
    with pytest.raises(OptionError, match="'scan.stream.initpos' has value 'EARLIEST'"):
        source_config({**BASE, "scan.stream.initpos": "EARLIEST"})
    with pytest.raises(OptionError, match="'scan.stream.initpos-timestamp' is required"):
        source_config({**BASE, "scan.stream.initpos": "AT_TIMESTAMP"})
    with pytest.raises(OptionError, match="'scan.shard.getrecords.maxrecordcount' has value 20000"):
        source_config({**BASE, "scan.shard.getrecords.maxrecordcount": "20000"})
    with pytest.raises(OptionError, match="'aws.region' is required"):
        source_config({"stream": "clicks", "format": "json"})
    with pytest.raises(OptionError, match="'aws.endpoint' has value"):
        source_config({**BASE, "aws.endpoint": "localhost:4568"})
    with pytest.raises(OptionError, match="did you mean 'format'"):
        source_config({**BASE, "formatt": "json"})
    with pytest.raises(OptionError, match="'scan.stream.efo.consumername' is required"):
        source_config({**BASE, "scan.stream.recordpublisher": "EFO"})
    with pytest.raises(OptionError, match="'scan.stream.efo.consumerarn.clicks' is required"):
        source_config({**BASE, "scan.stream.recordpublisher": "EFO", "scan.stream.efo.registration": "NONE"})
    efo = source_config({**BASE, "scan.stream.recordpublisher": "EFO", "scan.stream.efo.consumername": "c",
                         "scan.shard.subscribetoshard.maxretries": "4"})
    assert (efo.publisher, efo.efo_consumer_name, efo.efo_registration, efo.subscribe_retry) == ("EFO", "c", "LAZY", (4, 1000, 2000, 1.5))
    arn = "arn:aws:kinesis:us-east-1:000000000000:stream/clicks/consumer/c:1"
    assert source_config({**BASE, "scan.stream.recordpublisher": "EFO", "scan.stream.efo.registration": "NONE",
                          "scan.stream.efo.consumerarn.clicks": arn}).efo_consumer_arn == arn


def test_at_timestamp_in_both_forms():
    assert parse_start_timestamp("1459799926.480", None, "c", "k", "f") == 1459799926480
    assert parse_start_timestamp("2016-04-04T19:58:46.480-00:00", None, "c", "k", "f") == 1459799926480
    assert parse_start_timestamp("2016-04-04", "yyyy-MM-dd", "c", "k", "f") == 1459728000000
    with pytest.raises(OptionError, match="neither epoch seconds"):
        parse_start_timestamp("yesterday", None, "c", "scan.stream.initpos-timestamp", "f")
    config = source_config({**BASE, "scan.stream.initpos": "AT_TIMESTAMP", "scan.stream.initpos-timestamp": "2016-04-04",
                            "scan.stream.initpos-timestamp-format": "yyyy-MM-dd"})
    assert config.init_timestamp_ms == 1459728000000


def test_credentials_options_and_secrets_never_in_messages(caplog):
    secret = "s3cr3t-VALUE-never-shown"
    with pytest.raises(OptionError, match="'aws.credentials.basic.secretkey' is required") as error:
        source_config({**BASE, "aws.credentials.provider": "BASIC", "aws.credentials.basic.accesskeyid": "AKIA"})
    config = source_config({**BASE, "aws.credentials.provider": "BASIC", "aws.credentials.provider.basic.accesskeyid": "AKIA",
                            "aws.credentials.provider.basic.secretkey": secret})
    assert config.aws.credentials["basic.secretkey"] == secret  # Flink's aws.credentials.provider.X spelling
    assert secret not in repr(config) and secret not in config.aws.describe()
    with pytest.raises(OptionError) as error:
        source_config({**BASE, "aws.credentials.basic.secretkey": secret, "scan.stream.initpos": "NOPE"})
    assert secret not in str(error.value)
    with pytest.raises(OptionError, match="'aws.credentials.role.arn' is required"):
        source_config({**BASE, "aws.credentials.provider": "ASSUME_ROLE"})
    with pytest.raises(OptionError, match="CUSTOM"):
        source_config({**BASE, "aws.credentials.provider": "CUSTOM"})
    with caplog.at_level(logging.DEBUG):
        source_config({**BASE, "aws.credentials.basic.secretkey": secret, "scan.unknown.thing": "1"})
    assert secret not in caplog.text


def test_env_var_provider_needs_the_environment(monkeypatch):
    from kindling.connectors.kinesis.aws import kinesis_client

    monkeypatch.delenv("AWS_ACCESS_KEY_ID", raising=False)
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY", raising=False)
    config = source_config({**BASE, "aws.credentials.provider": "ENV_VAR"})
    with pytest.raises(OptionError, match="'aws.credentials.provider' = 'ENV_VAR' reads AWS_ACCESS_KEY_ID"):
        kinesis_client(config.aws, "kinesis source")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIA")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    assert kinesis_client(config.aws, "kinesis source") is not None


def test_sink_options():
    config = sink_config({**BASE, "sink.partitioner": "fixed", "sink.batch.max-size": "100", "sink.fail-on-error": "true"})
    assert (config.partitioner, config.batch_max_size, config.fail_on_error) == ("fixed", 100, True)
    assert (config.max_inflight, config.max_buffered) == (50, 10000)
    assert (config.flush_size, config.flush_timeout_ms, config.max_record_size, config.field_delimiter) == (5 * 1024 * 1024, 5000, 1024 * 1024, "|")
    with pytest.raises(OptionError, match="cannot be set on a PARTITIONED BY table"):
        sink_config({**BASE, "sink.partitioner": "random", "kindling.table.partition-keys": "user"})
    assert sink_config({**BASE, "kindling.table.partition-keys": "user;page"}).partition_fields == ("user", "page")
    with pytest.raises(OptionError, match="'sink.batch.max-size' has value 501"):
        sink_config({**BASE, "sink.batch.max-size": "501"})
    with pytest.raises(OptionError, match="'sink.partitioner' has value 'com.acme.Keys'"):
        sink_config({**BASE, "sink.partitioner": "com.acme.Keys"})


def test_registered_under_both_names():
    assert get_connector("kinesis").validate_source(BASE).get("stream") == "clicks"
    assert get_connector("kinesis-legacy").validate_source(BASE).get("stream") == "clicks"


# ------------------------------------------------------------------------------------------------------
# The driver's first request: the same code Spark runs when the query starts
# ------------------------------------------------------------------------------------------------------


def _reader(options):
    from kindling.connectors.kinesis.source import KinesisStreamReader

    return KinesisStreamReader(options, SCHEMA)


@pytest.mark.integration
def test_unknown_stream_wrong_endpoint_and_missing_credentials_fail_at_start(kinesis, monkeypatch):
    local = {"format": "json", "aws.region": "us-east-1", "aws.endpoint": kinesis.endpoint,
             "aws.credentials.provider": "BASIC", "aws.credentials.basic.accesskeyid": "k",
             "aws.credentials.basic.secretkey": "s3cr3t-never-shown", "scan.list.shards.maxretries": "0"}
    with pytest.raises(RuntimeError, match="option 'stream': stream 'no-such-stream' does not exist") as error:
        _reader({**local, "stream": "no-such-stream"})
    assert "s3cr3t-never-shown" not in str(error.value)
    from kindling.local.ports import free_port

    with pytest.raises(RuntimeError, match="option 'aws.endpoint': cannot reach"):
        _reader({**local, "stream": "x", "aws.endpoint": f"http://127.0.0.1:{free_port()}"})
    # No credentials anywhere in the default chain (and never ask an instance metadata service).
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_ROLE_ARN",
                 "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/credentials")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/config")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(RuntimeError, match="no AWS credentials for 'aws.credentials.provider' = 'AUTO'"):
        _reader({"stream": "x", "format": "json", "aws.region": "us-east-1", "aws.endpoint": kinesis.endpoint})
