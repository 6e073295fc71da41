"""Kafka connector options: every error names the option, the bad value and what is allowed."""

from __future__ import annotations

import json

import pytest

from kindling.connectors import Sink, Source, get_connector
from kindling.connectors.kafka import DeliveryGuarantee, KafkaOffsetsInitializer, KafkaSink, KafkaSource
from kindling.connectors.kafka.options import parse_specific_offsets, sink_config, source_config
from kindling.connectors.kafka.source import fair_share
from kindling.options import OptionError

BASE = {"properties.bootstrap.servers": "127.0.0.1:9092", "format": "json"}


def src(**extra):
    return {**BASE, "topic": "t", **{k.replace("_", "."): v for k, v in extra.items()}}


def error_of(fn, options) -> str:
    with pytest.raises(OptionError) as info:
        fn(options)
    return str(info.value)


def test_defaults_follow_flink():
    config = source_config({**BASE, "topic": "a; b"})
    assert config.topics == ("a", "b")
    assert config.startup_mode == "group-offsets"
    assert config.auto_offset_reset == "earliest"
    assert config.discovery_interval_s == 300
    assert config.value_format.name == "json" and not config.value_format.ignore_parse_errors
    sink = sink_config({**BASE, "topic": "out"})
    assert sink.delivery_guarantee == "at-least-once" and sink.partitioner == "default"


def test_keys_arrive_lowercased_from_spark():
    config = source_config({"properties.bootstrap.servers": "h:1", "topic": "t", "value.format": "csv",
                            "csv.field-delimiter": ";", "scan.startup.mode": "EARLIEST-OFFSET"})
    assert config.value_format.field_delimiter == ";" and config.startup_mode == "earliest-offset"


def test_topic_and_pattern_are_exclusive():
    message = error_of(source_config, {**BASE, "topic": "a", "topic-pattern": "a.*"})
    assert "'topic'" in message and "'topic-pattern'" in message and "exactly one" in message
    message = error_of(source_config, dict(BASE))
    assert "exactly one of 'topic'" in message


def test_bootstrap_servers_required():
    message = error_of(source_config, {"topic": "t", "format": "json"})
    assert "'properties.bootstrap.servers' is required" in message


def test_format_required_and_checked():
    message = error_of(source_config, {"properties.bootstrap.servers": "h:1", "topic": "t"})
    assert "'format'" in message and "'json'" in message and "'raw'" in message
    message = error_of(source_config, {**BASE, "topic": "t", "format": "protobuf"})
    assert "'format'" in message and "'protobuf'" in message and "'avro'" in message
    message = error_of(source_config, {**BASE, "topic": "t", "value.format": "csv"})
    assert "'format'" in message and "'value.format'" in message and "disagree" in message


def test_format_options_must_match_the_format():
    message = error_of(source_config, {**BASE, "topic": "t", "csv.field-delimiter": ";"})
    assert "'csv.field-delimiter'" in message and "'json'" in message


def test_unknown_option_suggests_the_nearest():
    message = error_of(source_config, src(**{"scan.startup.mod": "earliest-offset"}))
    assert "'scan.startup.mod'" in message and "did you mean 'scan.startup.mode'" in message


def test_startup_mode_values():
    message = error_of(source_config, src(**{"scan.startup.mode": "beginning"}))
    assert "'scan.startup.mode'" in message and "'beginning'" in message and "'earliest-offset'" in message


def test_timestamp_mode_needs_millis():
    message = error_of(source_config, src(**{"scan.startup.mode": "timestamp"}))
    assert "'scan.startup.timestamp-millis' is required" in message
    message = error_of(source_config, src(**{"scan.startup.mode": "timestamp", "scan.startup.timestamp-millis": "soon"}))
    assert "'scan.startup.timestamp-millis'" in message and "'soon'" in message and "integer" in message


def test_specific_offsets():
    assert parse_specific_offsets("partition:0,offset:42;partition:1,offset:300") == {0: 42, 1: 300}
    message = error_of(source_config, src(**{"scan.startup.mode": "specific-offsets"}))
    assert "'scan.startup.specific-offsets' is required" in message
    message = error_of(source_config, src(**{"scan.startup.mode": "specific-offsets",
                                             "scan.startup.specific-offsets": "0:42"}))
    assert "'scan.startup.specific-offsets'" in message and "'0:42'" in message and "partition:0,offset:42" in message
    message = error_of(source_config, {**BASE, "topic": "a;b", "scan.startup.mode": "specific-offsets",
                                       "scan.startup.specific-offsets": "partition:0,offset:1"})
    assert "single 'topic'" in message


def test_auto_offset_reset_and_durations():
    message = error_of(source_config, src(**{"properties.auto.offset.reset": "oldest"}))
    assert "'properties.auto.offset.reset'" in message and "'oldest'" in message and "'earliest'" in message
    message = error_of(source_config, src(**{"scan.topic-partition-discovery.interval": "often"}))
    assert "'scan.topic-partition-discovery.interval'" in message and "'often'" in message
    message = error_of(source_config, src(**{"scan.max-records-per-trigger": "0"}))
    assert "'scan.max-records-per-trigger'" in message and "at least 1" in message


def test_metadata_option():
    meta = '[["ts", "timestamp", false], ["p", "partition", true], ["k", "key", false]]'
    config = source_config(src(**{"kindling.table.metadata": meta}))
    assert config.metadata == (("ts", "timestamp"), ("p", "partition"), ("k", "key"))
    message = error_of(source_config, src(**{"kindling.table.metadata": '[["ts", "timestamps", false]]'}))
    assert "'ts'" in message and "'timestamps'" in message and "did you mean 'timestamp'" in message
    message = error_of(source_config, src(**{"kindling.table.metadata": "ts=timestamp"}))
    assert "'kindling.table.metadata'" in message and "JSON list" in message


def test_sink_rules():
    message = error_of(sink_config, {**BASE})
    assert "'topic' is required" in message
    message = error_of(sink_config, {**BASE, "topic": "o", "sink.delivery-guarantee": "exactly-once"})
    assert "'sink.transactional-id-prefix' is required" in message and "'exactly-once'" in message
    message = error_of(sink_config, {**BASE, "topic": "o", "sink.delivery-guarantee": "exactly-once",
                                     "sink.transactional-id-prefix": "my job"})
    assert "'sink.transactional-id-prefix'" in message and "'my job'" in message and "letters, digits" in message
    message = error_of(sink_config, {**BASE, "topic": "o", "sink.delivery-guarantee": "exactly-once",
                                     "sink.transactional-id-prefix": "j", "properties.transactional.id": "x"})
    assert "'properties.transactional.id'" in message and "'sink.transactional-id-prefix'" in message
    message = error_of(sink_config, {**BASE, "topic": "o", "sink.delivery-guarantee": "exactly-once",
                                     "sink.transactional-id-prefix": "j", "properties.transaction.timeout.ms": "1m"})
    assert "'properties.transaction.timeout.ms'" in message and "'1m'" in message
    config = sink_config({**BASE, "topic": "o", "sink.delivery-guarantee": "exactly-once",
                          "sink.transactional-id-prefix": "copy.job-1"})
    assert config.transactional_id == "copy.job-1-o" and config.commit_group == "copy.job-1-commits"
    producer = config.transactional_producer_config()
    assert producer["transactional.id"] == "copy.job-1-o" and producer["transaction.timeout.ms"] == "900000"
    custom = sink_config({**BASE, "topic": "o", "sink.delivery-guarantee": "exactly-once",
                          "sink.transactional-id-prefix": "j", "properties.transaction.timeout.ms": "60000"})
    assert custom.transactional_producer_config()["transaction.timeout.ms"] == "60000"
    assert "transaction.timeout.ms" not in custom.producer_config()
    message = error_of(sink_config, {**BASE, "topic": "o", "sink.delivery-guarantee": "twice"})
    assert "'twice'" in message and "'at-least-once'" in message
    message = error_of(sink_config, {**BASE, "topic": "o", "key.fields": "id"})
    assert "'key.fields'" in message and "'key.format'" in message
    message = error_of(sink_config, {**BASE, "topic": "o", "key.format": "raw", "key.fields": "a;b"})
    assert "'key.fields'" in message and "exactly one" in message
    message = error_of(sink_config, {**BASE, "topic": "o", "sink.partitioner": "hash"})
    assert "'sink.partitioner'" in message and "'round-robin'" in message


def test_connector_registry_validates_the_whole_option_set():
    connector = get_connector("kafka")
    assert connector.name == "kafka"
    with pytest.raises(OptionError, match="exactly one of 'topic'"):
        Source("kafka", {**BASE}, None)
    with pytest.raises(OptionError, match="'sink.transactional-id-prefix' is required"):
        Sink("kafka", {**BASE, "topic": "o", "sink.delivery-guarantee": "exactly-once"})
    raw = Source("kafka", {"properties.bootstrap.servers": "h:1", "topic": "t", "format": "raw"})
    assert raw.schema.names == ["value"]


def test_builders_produce_flink_options():
    source = (KafkaSource.builder().set_bootstrap_servers("h:1").set_topics("a", "b").set_group_id("g")
              .set_starting_offsets(KafkaOffsetsInitializer.timestamp(1700000000000)).set_value_format("json")
              .set_schema("page STRING, user BIGINT").set_property("fetch.min.bytes", 1)
              .with_metadata("p", "partition").with_metadata("ts", "timestamp").build())
    assert source.options["topic"] == "a;b"
    assert source.options["scan.startup.mode"] == "timestamp"
    assert source.options["scan.startup.timestamp-millis"] == "1700000000000"
    assert source.options["properties.fetch.min.bytes"] == "1"
    assert json.loads(source.options["kindling.table.metadata"]) == [["p", "partition", False], ["ts", "timestamp", False]]
    assert source.schema.simpleString() == "struct<page:string,user:bigint,p:int,ts:timestamp>"
    offsets = KafkaSource.builder().set_bootstrap_servers("h:1").set_topics("a").set_value_format("raw") \
        .set_starting_offsets(KafkaOffsetsInitializer.offsets({1: 300, 0: 42})).build()
    assert offsets.options["scan.startup.specific-offsets"] == "partition:0,offset:42;partition:1,offset:300"
    sink = (KafkaSink.builder().set_bootstrap_servers("h:1").set_topic("o").set_value_format("json")
            .set_key_fields("id").set_delivery_guarantee(DeliveryGuarantee.AT_LEAST_ONCE).build())
    assert sink.options["key.format"] == "json" and sink.options["key.fields"] == "id"
    with pytest.raises(OptionError, match="'sink.transactional-id-prefix' is required"):
        KafkaSink.builder().set_bootstrap_servers("h:1").set_topic("o").set_value_format("json") \
            .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE).build()
    exactly_once = (KafkaSink.builder().set_bootstrap_servers("h:1").set_topic("o").set_value_format("json")
                    .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE).set_transactional_id_prefix("copy").build())
    assert exactly_once.options["sink.delivery-guarantee"] == "exactly-once"
    assert exactly_once.options["sink.transactional-id-prefix"] == "copy"


def test_fair_share_of_a_row_budget():
    assert fair_share({"a": 100, "b": 100, "c": 100, "d": 100}, 40) == {"a": 10, "b": 10, "c": 10, "d": 10}
    # A small partition takes what it has; the rest is shared by the others.
    assert fair_share({"a": 2, "b": 100, "c": 100}, 40) == {"a": 2, "b": 19, "c": 19}
    assert sum(fair_share({"a": 5, "b": 7, "c": 9}, 10).values()) == 10
    assert fair_share({"a": 5, "b": 0}, 100) == {"a": 5, "b": 0}
