"""Option validation and the pure parts of the sink (no server, no Spark): Flink's keys, defaults and messages."""

from __future__ import annotations

import datetime as dt
import logging

import pyarrow as pa
import pytest
from pyspark.sql.types import BooleanType, DoubleType, LongType, StringType, StructField, StructType, TimestampType

from kindling.connectors import Sink, available, get_connector
from kindling.connectors.base import ROWKIND_COLUMN
from kindling.connectors.elasticsearch.actions import ActionBuilder, check_input, java_double
from kindling.connectors.elasticsearch.index import IndexPattern
from kindling.connectors.elasticsearch.options import FLAVORS, sink_config
from kindling.options import OptionError

BASE = {"hosts": "http://127.0.0.1:9200", "index": "users"}
SCHEMA = StructType([StructField("a", StringType()), StructField("b", LongType()), StructField("ts", TimestampType()),
                     StructField("ok", BooleanType()), StructField("x", DoubleType())])


def config(flavor="elasticsearch-7", **extra):
    return sink_config(FLAVORS[flavor], {**BASE, **extra})


def test_four_names_one_implementation():
    assert {"elasticsearch-6", "elasticsearch-7", "elasticsearch-8", "opensearch"} <= set(available())
    names = {get_connector(n).data_source.name() for n in ("elasticsearch-6", "elasticsearch-7", "elasticsearch-8", "opensearch")}
    assert names == {"kindling_elasticsearch_6", "kindling_elasticsearch_7", "kindling_elasticsearch_8", "kindling_opensearch"}
    assert get_connector("opensearch").flavor == "opensearch"


def test_defaults_as_flink():
    c = config()
    assert (c.max_actions, c.max_bytes, c.interval_s) == (1000, 2 * 1024 * 1024, 1.0)
    assert c.key_delimiter == "_" and c.failure_handler == "fail" and c.delivery_guarantee == "AT_LEAST_ONCE"
    assert c.backoff == "DISABLED" and c.backoff_delays() == []
    assert c.json.timestamp_standard == "SQL"


def test_union_of_the_3x_and_4x_option_sets_is_accepted():
    c = config(**{"failure-handler": "retry-rejected", "sink.flush-on-checkpoint": "false", "connection.timeout": "5 s",
                  "socket.timeout": "30 s", "connection.request-timeout": "2 s", "sink.parallelism": "2",
                  "connection.path-prefix": "/v1", "json.timestamp-format.standard": "ISO-8601",
                  "sink.bulk-flush.backoff.strategy": "EXPONENTIAL", "sink.bulk-flush.backoff.max-retries": "3",
                  "sink.bulk-flush.backoff.delay": "100 ms", "sink.bulk-flush.max-actions": "0", "sink.bulk-flush.max-size": "0",
                  "sink.bulk-flush.interval": "0"})
    assert c.failure_handler == "retry-rejected" and c.delivery_guarantee == "NONE"  # flush-on-checkpoint=false
    assert (c.max_actions, c.max_bytes, c.interval_s) == (-1, -1, 0.0)
    assert c.backoff_delays() == pytest.approx([0.1, 0.2, 0.4])
    assert c.socket_timeout_s == 30 and c.path_prefix == "/v1"
    assert config("elasticsearch-8", **{"sink.bulk-flush.max-buffered-actions": "2000"}).flavor.name == "elasticsearch-8"


def test_exactly_once_is_refused_with_flinks_message():
    with pytest.raises(OptionError, match="Elasticsearch sink does not support the EXACTLY_ONCE guarantee.*sink.delivery-guarantee"):
        config(**{"sink.delivery-guarantee": "EXACTLY_ONCE"})
    with pytest.raises(OptionError, match="EXACTLY_ONCE"):
        Sink("elasticsearch-7", {**BASE, "sink.delivery-guarantee": "exactly_once"})


@pytest.mark.parametrize("hosts, message", [
    ("localhost:9200", "Missing scheme"),
    ("http://localhost", "Missing port"),
    ("http://localhost:port", "Could not parse host 'http://localhost:port' in option 'hosts'"),
    ("ftp://h:1", "is not http or https"),
])
def test_malformed_hosts(hosts, message):
    with pytest.raises(OptionError, match=message):
        config(hosts=hosts)
    assert [h.url for h in config(hosts="http://a:1; https://b:2").hosts] == ["http://a:1", "https://b:2"]


@pytest.mark.parametrize("key, value, message", [
    ("sink.bulk-flush.max-size", "1500kb", "'sink.bulk-flush.max-size' must be in MB granularity. Got: 1500kb"),
    ("sink.bulk-flush.max-actions", "-5", "'sink.bulk-flush.max-actions' must be at least 1. Got: -5"),
    ("sink.bulk-flush.backoff.max-retries", "0", "'sink.bulk-flush.backoff.max-retries' must be at least 1"),
    ("username", "elastic", "'username' and 'password' must be set at the same time"),
    ("failure-handler", "com.acme.Handler", "Could not instantiate the failure handler class: com.acme.Handler"),
    ("index", "", "'index' must not be empty"),
    ("format", "csv", "'format'"),
    ("sink.bulk-flush.interal", "1s", "did you mean 'sink.bulk-flush.interval'"),
])
def test_bad_values_name_the_option(key, value, message):
    with pytest.raises(OptionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        config(**{key: value})


def test_elasticsearch_6_needs_a_document_type():
    with pytest.raises(OptionError, match="'document-type' is required"):
        config("elasticsearch-6")
    assert config("elasticsearch-6", **{"document-type": "_doc"}).document_type == "_doc"
    with pytest.raises(OptionError, match="unknown"):
        config("elasticsearch-7", **{"document-type": "_doc"})


def test_index_grammar_errors():
    with pytest.raises(OptionError, match="Chaining dynamic index pattern a-{x}-{y} is not supported"):
        IndexPattern.parse("a-{x}-{y}")
    with pytest.raises(OptionError, match="Unknown field 'nope' in index pattern"):
        IndexPattern.parse("a-{nope}").check(SCHEMA, False)
    with pytest.raises(OptionError, match="Unsupported type BOOLEAN of index field"):
        IndexPattern.parse("a-{ok}").check(SCHEMA, False)
    with pytest.raises(OptionError, match="time-related pattern only support types are: DATE,TIME,TIMESTAMP"):
        IndexPattern.parse("a-{a|yyyy}").check(SCHEMA, False)
    with pytest.raises(OptionError, match="Dynamic indexing based on system time only works on append only stream"):
        IndexPattern.parse("a-{now()|yyyy-MM-dd}").check(SCHEMA, True)
    IndexPattern.parse("a-{NOW()|yyyy-MM-dd}").check(SCHEMA, False)
    with pytest.raises(OptionError, match="has no primary key"):
        check_input(config(), SCHEMA, updating=True)


def test_index_values_and_ids_as_flink_writes_them():
    ts = pa.array([dt.datetime(2020, 3, 27, 12, 25, 55), dt.datetime(2021, 1, 2, 3, 4, 5, 120000)], pa.timestamp("us", tz="UTC"))
    batch = pa.RecordBatch.from_arrays([pa.array(["k1", "k2"]), pa.array([1, 2]), ts, pa.array([True, False]), pa.array([1.0, 1e10])],
                                       names=SCHEMA.names)
    assert IndexPattern.parse("myusers-{ts|yyyy-MM-dd}").generate(batch).to_pylist() == ["myusers-2020-03-27", "myusers-2021-01-02"]
    assert IndexPattern.parse("u_{ts|}").generate(batch).to_pylist() == ["u_2020_03_27_12_25_55", "u_2021_01_02_03_04_05"]
    assert IndexPattern.parse("u-{a}-x").generate(batch).to_pylist() == ["u-k1-x", "u-k2-x"]
    assert IndexPattern.parse("static").generate(batch) == "static"
    today = dt.datetime.now(dt.timezone.utc).strftime("%Y.%m.%d")
    assert IndexPattern.parse("n-{now()|yyyy.MM.dd}").generate(batch) in (f"n-{today}", "n-" + dt.datetime.now(dt.timezone.utc).strftime("%Y.%m.%d"))
    builder = ActionBuilder(config(**{"kindling.table.primary-key": "a;b;ts;ok;x", "document-id.key-delimiter": "$"}), SCHEMA)
    assert builder.ids(batch).to_pylist() == ["k1$1$2020-03-27T12:25:55$true$1.0", "k2$2$2021-01-02T03:04:05.120$false$1.0E10"]
    assert [java_double(v) for v in (0.5, 12345678.0, 1e-5)] == ["0.5", "1.2345678E7", "1.0E-5"]


def test_a_lone_update_before_deletes_the_document_and_one_followed_by_its_update_is_skipped():
    """Flink's emitter deletes on UPDATE_BEFORE: a HAVING that drops a key's new value removes its document."""
    schema = StructType([StructField("a", StringType()), StructField("b", LongType()), StructField(ROWKIND_COLUMN, StringType())])
    builder = ActionBuilder(config(**{"kindling.table.primary-key": "a"}), schema)
    batch = pa.RecordBatch.from_arrays([pa.array(["k1", "k2", "k2", "k3"]), pa.array([1, 2, 3, 4]),
                                        pa.array(["-U", "-U", "+U", "+I"])], names=schema.names)
    actions = [line.split("\n")[0] for line in builder.build(batch).to_pylist()]
    assert actions == ['{"delete":{"_index":"users","_id":"k1"}}', '{"update":{"_index":"users","_id":"k2"}}',
                       '{"update":{"_index":"users","_id":"k3"}}']


@pytest.mark.parametrize("extra, message", [
    ({"sink.bulk-flush.max-actions": "0"}, "'sink.bulk-flush.max-actions' must be at least 1. Got: 0"),
    ({"sink.bulk-flush.max-size": "0"}, "'sink.bulk-flush.max-size' must be in MB granularity. Got: 0"),
    ({"sink.bulk-flush.interval": "0"}, "Max time in buffer must be positive. (option 'sink.bulk-flush.interval' = '0'"),
    ({"sink.bulk-flush.max-in-flight-actions": "0"}, "Max in flight requests must be positive. (option 'sink.bulk-flush.max-in-flight-actions' = 0)"),
    ({"sink.bulk-flush.max-buffered-actions": "1000"},
     "The maximum number of requests that may be buffered should be strictly greater than the maximum number of requests per "
     "batch. (options 'sink.bulk-flush.max-buffered-actions' = 1000 and 'sink.bulk-flush.max-actions' = 1000)"),
    ({"sink.bulk-flush.max-actions": "50", "sink.bulk-flush.max-buffered-actions": "20"}, "strictly greater"),
])
def test_elasticsearch_8_rules_of_the_async_sink(extra, message):
    """elasticsearch-8 is Flink's AsyncSink: no trigger can be disabled, and its buffer must exceed a bulk request."""
    with pytest.raises(OptionError) as caught:
        config("elasticsearch-8", **extra)
    assert message in str(caught.value)
    config("elasticsearch-7", **{k: v for k, v in extra.items() if "buffered" not in k and "in-flight" not in k})  # 6/7: 0 disables
    good = config("elasticsearch-8", **{"sink.bulk-flush.max-actions": "50", "sink.bulk-flush.max-buffered-actions": "51"})
    assert good.max_actions == 50


def test_failure_handler_is_honoured_with_a_warning_that_it_is_a_3x_option(caplog):
    from kindling.connectors.elasticsearch import options

    options._warned.discard("failure-handler")
    with caplog.at_level(logging.WARNING, logger=options.__name__):
        assert config().failure_handler == "fail"  # the default: no warning
        assert not caplog.records
        assert config(**{"failure-handler": "ignore"}).failure_handler == "ignore"
        config(**{"failure-handler": "ignore"})  # once per process
    assert [r.getMessage() for r in caplog.records] == [
        "elasticsearch-7 sink option: option 'failure-handler' is a Flink 3.x option (the legacy SinkFunction of Flink 1.x); "
        "Flink 2.x's connector rejects it. kindling honours it: 'ignore'"]


def test_retry_on_conflicts_becomes_the_updates_retry_on_conflict():
    schema = StructType([StructField("a", StringType()), StructField("b", LongType())])
    batch = pa.RecordBatch.from_arrays([pa.array(["k1"]), pa.array([1])], names=schema.names)
    keyed = {"kindling.table.primary-key": "a"}
    assert config(**keyed).retry_on_conflict == -1
    line = ActionBuilder(config(**keyed), schema).build(batch).to_pylist()[0].split("\n")[0]
    assert line == '{"update":{"_index":"users","_id":"k1"}}'
    line = ActionBuilder(config(**keyed, **{"sink.retry-on-conflicts": "3"}), schema).build(batch).to_pylist()[0].split("\n")[0]
    assert line == '{"update":{"_index":"users","_id":"k1","retry_on_conflict":3}}'
    with pytest.raises(OptionError, match="'sink.retry-on-conflicts' = -2: give a number of retries"):
        config(**{"sink.retry-on-conflicts": "-2"})


def test_https_trust_options(tmp_path):
    ca = tmp_path / "ca.pem"
    with pytest.raises(OptionError, match="option 'kindling.ssl.ca-certificate' = '.*missing.pem': cannot read the file"):
        config(hosts="https://h:9200", **{"kindling.ssl.ca-certificate": str(tmp_path / "missing.pem")})
    ca.write_text("not a certificate")
    with pytest.raises(OptionError, match="the file holds no PEM certificate"):
        config(hosts="https://h:9200", **{"kindling.ssl.ca-certificate": str(ca)})
    ca.write_text("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
    with pytest.raises(OptionError, match="'kindling.ssl.ca-certificate' is set but no host of option 'hosts' uses https"):
        config(**{"kindling.ssl.ca-certificate": str(ca)})
    with pytest.raises(OptionError, match="options 'ssl.certificate-fingerprint' and 'kindling.ssl.ca-certificate' are both set"):
        config(hosts="https://h:9200", **{"kindling.ssl.ca-certificate": str(ca), "ssl.certificate-fingerprint": "AB" * 32})
    assert config(hosts="https://h:9200", **{"kindling.ssl.ca-certificate": str(ca)}).ca_certificates.startswith("-----BEGIN")


def test_timestamp_ltz_index_fields_are_rendered_in_the_session_time_zone():
    """A TIMESTAMP_LTZ column (an instant) formats in the session's zone with Flink's LTZ default 'yyyy_MM_dd_HH_mm_ssX';
    a TIMESTAMP formats the wall-clock time it holds, whatever the zone."""
    ts = pa.array([dt.datetime(2020, 3, 27, 20, 25, 55)], pa.timestamp("us", tz="UTC"))
    batch = pa.RecordBatch.from_arrays([pa.array(["k"]), pa.array([1]), ts, pa.array([True]), pa.array([1.0])], names=SCHEMA.names)
    instant = config(**{"kindling.table.instant-columns": "ts"}).instant_fields
    assert instant == ("ts",)
    assert IndexPattern.parse("i-{ts|yyyy-MM-dd HH}").generate(batch, "Asia/Shanghai", instant).to_pylist() == ["i-2020-03-28 04"]
    assert IndexPattern.parse("i-{ts|}").generate(batch, "Asia/Shanghai", instant).to_pylist() == ["i-2020_03_28_04_25_55+08"]
    assert IndexPattern.parse("i-{ts|}").generate(batch, "UTC", instant).to_pylist() == ["i-2020_03_27_20_25_55Z"]
    assert IndexPattern.parse("i-{ts|yyyy-MM-dd HH}").generate(batch, "Asia/Shanghai").to_pylist() == ["i-2020-03-27 20"]
    IndexPattern.parse("i-{ts|yyyy}").check(SCHEMA, False, instant)
    with pytest.raises(OptionError, match="Unsupported type BOOLEAN"):
        IndexPattern.parse("i-{ok|yyyy}").check(SCHEMA, False, ("ok",))
