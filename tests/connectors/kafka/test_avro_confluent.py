"""The 'avro-confluent' format: Confluent's wire format with a schema registry, Flink's options, interop with
confluent-kafka's AvroSerializer/AvroDeserializer both ways, schema evolution, and its error paths."""

from __future__ import annotations

import json
import os
import sys
import uuid
import warnings
from datetime import datetime, timezone

import pyarrow as pa
import pytest
from pyspark.sql.types import ArrayType, DoubleType, IntegerType, LongType, MapType, StringType, StructField, StructType, TimestampType

from kindling.arrow import arrow_schema
from kindling.connectors.base import with_eos
from kindling.connectors.kafka import KafkaOffsetsInitializer, KafkaSink, KafkaSource
from kindling.connectors.kafka.options import sink_config, source_config
from kindling.formats import RowEncoder, ValueDecoder
from kindling.formats.avro_confluent import SchemaRegistryError
from kindling.local.ports import free_port
from kindling.local.schema_registry import LocalSchemaRegistry
from kindling.options import OptionError

sys.path.insert(0, os.path.dirname(__file__))
import authlib.deprecate  # noqa: E402,F401 - installs an 'always' filter for its warning; ours below goes first
from kafka_helpers import produce, read_back, run_available_now  # noqa: E402

with warnings.catch_warnings():  # confluent's registry client imports authlib's deprecated httpx integration
    warnings.simplefilter("ignore", DeprecationWarning)
    from confluent_kafka.schema_registry import Schema, SchemaRegistryClient  # noqa: E402
    from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer  # noqa: E402
from confluent_kafka.serialization import MessageField, SerializationContext  # noqa: E402

pytestmark = pytest.mark.integration  # every test talks to a local schema registry server

COLUMNS = "id BIGINT NOT NULL, name STRING, ts TIMESTAMP, score DOUBLE"
ROWS = [
    {"id": 1, "name": "ada", "ts": datetime(2026, 11, 22, 1, 2, 3, 123000, tzinfo=timezone.utc), "score": 1.5},
    {"id": 2, "name": None, "ts": None, "score": None},
]
# What another team's producer writes: its own record name and namespace, and later a field added with a default.
USER_V1 = {"type": "record", "name": "User", "namespace": "com.example.users", "fields": [
    {"name": "id", "type": "long"}, {"name": "name", "type": ["null", "string"], "default": None}]}
USER_V2 = {**USER_V1, "fields": USER_V1["fields"] + [{"name": "email", "type": ["null", "string"], "default": None}]}


def sink_options(url: str, topic: str = "orders", **extra: str) -> dict:
    return {"topic": topic, "properties.bootstrap.servers": "127.0.0.1:1", "value.format": "avro-confluent",
            "value.avro-confluent.url": url, **extra}


def source_options(url: str, topic: str = "orders", **extra: str) -> dict:
    return {"topic": topic, "properties.bootstrap.servers": "127.0.0.1:1", "format": "avro-confluent",
            "avro-confluent.url": url, **extra}


_TYPES = {"BIGINT": LongType(), "INT": IntegerType(), "STRING": StringType(), "TIMESTAMP": TimestampType(),
          "DOUBLE": DoubleType()}


def _parse_datatype_string(columns: str) -> StructType:
    """'id BIGINT NOT NULL, name STRING' -> StructType, without a SparkSession (these tests need none)."""
    fields = []
    for part in columns.split(","):
        name, kind, *rest = part.split()
        fields.append(StructField(name, _TYPES[kind], nullable=not rest))
    return StructType(fields)


def batch_of(columns: str, rows: list[dict]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(rows, schema=arrow_schema(_parse_datatype_string(columns)))


def ctx(topic: str, field: str = MessageField.VALUE) -> SerializationContext:
    return SerializationContext(topic, field)


def test_options_follow_flink(schema_registry):
    config = sink_config(sink_options(schema_registry.url, **{
        "key.format": "avro-confluent", "key.fields": "id", "key.avro-confluent.url": schema_registry.url}))
    assert config.value_format.registry.subject == "orders-value"
    assert config.key_format.registry.subject == "orders-key"
    named = sink_config(sink_options(schema_registry.url, **{"value.avro-confluent.subject": "shared"}))
    assert named.value_format.registry.subject == "shared"
    plain = source_config({"topic": "a", "properties.bootstrap.servers": "x:1", "format": "avro-confluent",
                           "avro-confluent.url": schema_registry.url})
    assert plain.value_format.registry.urls == (schema_registry.url,)
    with pytest.raises(OptionError, match=r"'value.avro-confluent.url' or 'avro-confluent.url' is required"):
        sink_config({"topic": "t", "properties.bootstrap.servers": "x:1", "value.format": "avro-confluent"})
    with pytest.raises(OptionError, match="belongs to the 'avro-confluent' format"):
        sink_config({**sink_options(schema_registry.url), "value.format": "json"})
    with pytest.raises(OptionError, match="key.avro-confluent.url"):
        sink_config(sink_options(schema_registry.url, **{"key.format": "json", "key.fields": "id",
                                                         "key.avro-confluent.url": schema_registry.url}))
    mapped = sink_config(sink_options(schema_registry.url, **{"value.avro-confluent.properties": "request.timeout.ms:2500"}))
    assert mapped.value_format.registry.timeout_s == 2.5
    with pytest.raises(OptionError, match="properties.ssl.ca.location"):
        sink_config(sink_options(schema_registry.url, **{"value.avro-confluent.properties.no.such.key": "1"}))
    # Credentials: user:password required, never echoed, not in repr.
    with pytest.raises(OptionError) as bad:
        sink_config(sink_options(schema_registry.url, **{"value.avro-confluent.basic-auth.credentials-source": "USER_INFO",
                                                         "value.avro-confluent.basic-auth.user-info": "justasecret"}))
    assert "justasecret" not in str(bad.value)
    secret = sink_config(sink_options(schema_registry.url, **{"value.avro-confluent.basic-auth.user-info": "u:topsecret"}))
    assert secret.value_format.registry.user_info == "u:topsecret" and "topsecret" not in repr(secret)


def test_sink_values_are_confluent_framed_and_confluent_reads_them(schema_registry):
    topic = f"enc-{uuid.uuid4().hex[:8]}"
    schema = _parse_datatype_string(COLUMNS)
    config = sink_config(sink_options(schema_registry.url, topic))
    values = RowEncoder(config.value_format, schema.names, schema).encode(batch_of(COLUMNS, ROWS))
    client = SchemaRegistryClient({"url": schema_registry.url})
    registered = client.get_latest_version(f"{topic}-value")
    assert all(v[0] == 0 and int.from_bytes(v[1:5], "big") == registered.schema_id for v in values)
    assert json.loads(registered.schema.schema_str)["namespace"] == "org.apache.flink.avro.generated"  # Flink's schema
    assert [AvroDeserializer(client)(v, ctx(topic)) for v in values] == ROWS
    # Another writer (other task, same schema) reuses the id: no new version.
    RowEncoder(sink_config(sink_options(schema_registry.url, topic)).value_format, schema.names, schema).encode(
        batch_of(COLUMNS, ROWS[:1]))
    assert client.get_versions(f"{topic}-value") == [1]
    # MAP columns (Arrow hands them over as key/value pairs) round-trip too.
    mapped = StructType([StructField("id", LongType()), StructField("attrs", MapType(StringType(), IntegerType()))])
    config = sink_config(sink_options(schema_registry.url, topic + "-map"))
    values = RowEncoder(config.value_format, mapped.names, mapped).encode(
        pa.RecordBatch.from_pylist([{"id": 1, "attrs": [("a", 1), ("b", None)]}], schema=arrow_schema(mapped)))
    assert AvroDeserializer(client)(values[0], ctx(topic)) == {"id": 1, "attrs": {"a": 1, "b": None}}
    decoded = ValueDecoder(mapped, source_config(source_options(schema_registry.url)).value_format).decode(values)
    assert decoded.arrays[1].to_pylist() == [[("a", 1), ("b", None)]]
    # An explicit writer schema ('avro-confluent.schema') is registered and used as given.
    explicit = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
        {"name": "id", "type": "long"}, {"name": "name", "type": ["null", "string"], "default": None}]}
    columns = "id BIGINT NOT NULL, name STRING"
    config = sink_config(sink_options(schema_registry.url, topic + "-x", **{"value.avro-confluent.schema": json.dumps(explicit)}))
    values = RowEncoder(config.value_format, ["id", "name"], _parse_datatype_string(columns)).encode(
        batch_of(columns, [{"id": 5, "name": "e"}]))
    assert json.loads(client.get_latest_version(f"{topic}-x-value").schema.schema_str)["name"] == "Order"
    assert AvroDeserializer(client)(values[0], ctx(topic)) == {"id": 5, "name": "e"}


def test_source_reads_confluent_records_across_schema_versions(schema_registry):
    topic = f"dec-{uuid.uuid4().hex[:8]}"
    client = SchemaRegistryClient({"url": schema_registry.url})
    v1 = AvroSerializer(client, json.dumps(USER_V1))({"id": 1, "name": "ada"}, ctx(topic))
    v2 = AvroSerializer(client, json.dumps(USER_V2))({"id": 2, "name": "bob", "email": "bob@example.com"}, ctx(topic))
    assert v1[1:5] != v2[1:5] and client.get_versions(f"{topic}-value") == [1, 2]
    config = source_config(source_options(schema_registry.url, topic))
    # The older reader (the table has no 'email') reads both; the field added with a default is dropped.
    old = "id BIGINT, name STRING"
    decoded = ValueDecoder(_parse_datatype_string(old), config.value_format).decode([v1, v2, None])
    assert not decoded.errors and decoded.skipped_nulls == 1
    assert pa.RecordBatch.from_arrays(decoded.arrays, schema=arrow_schema(_parse_datatype_string(old))).to_pylist() == [
        {"id": 1, "name": "ada"}, {"id": 2, "name": "bob"}]
    # The newer reader reads the old record with the field's default.
    new = "id BIGINT, name STRING, email STRING"
    decoded = ValueDecoder(_parse_datatype_string(new), config.value_format).decode([v1, v2])
    assert pa.RecordBatch.from_arrays(decoded.arrays, schema=arrow_schema(_parse_datatype_string(new))).to_pylist() == [
        {"id": 1, "name": "ada", "email": None}, {"id": 2, "name": "bob", "email": "bob@example.com"}]
    # 'avro-confluent.schema' is the reader schema when given (Flink: it must match the table's columns).
    explicit = source_config(source_options(schema_registry.url, topic, **{"avro-confluent.schema": json.dumps(USER_V1)}))
    decoded = ValueDecoder(_parse_datatype_string(old), explicit.value_format).decode([v2])
    assert [a.to_pylist() for a in decoded.arrays] == [[2], ["bob"]]
    # Nested records and arrays of records: the writer's own type names resolve against Flink's 'record_<column>'.
    nested = {"type": "record", "name": "Order", "namespace": "shop", "fields": [
        {"name": "id", "type": "long"},
        {"name": "buyer", "type": {"type": "record", "name": "Person", "fields": [{"name": "city", "type": "string"}]}},
        {"name": "lines", "type": {"type": "array", "items": {"type": "record", "name": "Line", "fields": [
            {"name": "sku", "type": "string"}, {"name": "qty", "type": "int"}]}}}]}
    value = AvroSerializer(client, json.dumps(nested))(
        {"id": 9, "buyer": {"city": "Oslo"}, "lines": [{"sku": "a", "qty": 2}]}, ctx(topic + "-nested"))
    columns = StructType([
        StructField("id", LongType()),
        StructField("buyer", StructType([StructField("city", StringType())])),
        StructField("lines", ArrayType(StructType([StructField("sku", StringType()), StructField("qty", LongType())]))),
    ])
    decoded = ValueDecoder(columns, config.value_format).decode([value])
    assert not decoded.errors, decoded.errors
    assert pa.RecordBatch.from_arrays(decoded.arrays, schema=arrow_schema(columns)).to_pylist() == [
        {"id": 9, "buyer": {"city": "Oslo"}, "lines": [{"sku": "a", "qty": 2}]}]
    # A named type used twice by the writer (the second use is a reference by name).
    twice = {"type": "record", "name": "Parcel", "namespace": "shop", "fields": [
        {"name": "origin", "type": {"type": "record", "name": "Place", "fields": [{"name": "city", "type": "string"}]}},
        {"name": "target", "type": ["null", "shop.Place"], "default": None}]}
    value = AvroSerializer(client, json.dumps(twice))({"origin": {"city": "Oslo"}, "target": {"city": "Rome"}},
                                                      ctx(topic + "-twice"))
    place = StructType([StructField("city", StringType())])
    columns = StructType([StructField("origin", place), StructField("target", place)])
    decoded = ValueDecoder(columns, config.value_format).decode([value])
    assert not decoded.errors, decoded.errors
    assert [a.to_pylist() for a in decoded.arrays] == [[{"city": "Oslo"}], [{"city": "Rome"}]]
    # A reader column the writer never had and that cannot be null (no default) cannot be read: named, per record.
    strict = ValueDecoder(_parse_datatype_string("id BIGINT, rank INT NOT NULL"), config.value_format).decode([v1])
    assert strict.errors and "rank" in strict.errors[0][1]


def test_bad_records_and_registry_failures_are_reported(schema_registry):
    topic = f"err-{uuid.uuid4().hex[:8]}"
    columns = _parse_datatype_string("id BIGINT, name STRING")
    client = SchemaRegistryClient({"url": schema_registry.url})
    good = AvroSerializer(client, json.dumps(USER_V1))({"id": 1, "name": "ada"}, ctx(topic))
    unknown_id = b"\x00" + (10_000_000).to_bytes(4, "big") + good[5:]
    decoded = ValueDecoder(columns, source_config(source_options(schema_registry.url, topic)).value_format).decode(
        [good, b'{"id": 1}', unknown_id, b"\x00\x00"])
    errors = dict(decoded.errors)
    assert decoded.kept == [0]
    assert "magic byte 0" in errors[1] and "0x7b" in errors[1]
    assert "schema id 10000000" in errors[2] and "40403" in errors[2]
    assert "magic byte" in errors[3]
    # Unreachable registry: the task fails naming the URL and the option (not a per-record error).
    down = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(SchemaRegistryError, match=rf"cannot reach the schema registry at {down}.*'avro-confluent.url'"):
        ValueDecoder(columns, source_config(source_options(down, topic)).value_format).decode([good])
    encoder = RowEncoder(sink_config(sink_options(down, topic)).value_format, ["id", "name"], columns)
    with pytest.raises(SchemaRegistryError, match="value.avro-confluent.url"):
        encoder.encode(batch_of("id BIGINT, name STRING", [{"id": 1, "name": "a"}]))
    # auto.register.schemas = false and the schema is not registered.
    config = sink_config(sink_options(schema_registry.url, topic + "-manual", **{"value.avro-confluent.auto.register.schemas": "false"}))
    with pytest.raises(SchemaRegistryError, match="not registered under subject .*auto.register.schemas"):
        RowEncoder(config.value_format, ["id", "name"], columns).encode(batch_of("id BIGINT, name STRING", [{"id": 1, "name": "a"}]))
    # The subject's compatibility (BACKWARD) refuses the table's schema: its 'id' cannot read a string 'id' (409).
    client.register_schema(f"{topic}-strict-value", Schema(json.dumps(
        {"type": "record", "name": "record", "namespace": "org.apache.flink.avro.generated",
         "fields": [{"name": "id", "type": "string"}]}), "AVRO"))
    config = sink_config(sink_options(schema_registry.url, topic + "-strict"))
    with pytest.raises(SchemaRegistryError, match=r"subject '.*-strict-value'.*HTTP 409"):
        RowEncoder(config.value_format, ["id", "name"], columns).encode(batch_of("id BIGINT, name STRING", [{"id": 1, "name": "a"}]))


def test_basic_auth_and_refused_credentials(tmp_path):
    columns = _parse_datatype_string("id BIGINT, name STRING")
    rows = batch_of("id BIGINT, name STRING", [{"id": 1, "name": "a"}])
    with LocalSchemaRegistry(data_dir=tmp_path / "auth", user_info="svc:pa55word") as server:
        ok = sink_config(sink_options(server.url, **{"value.avro-confluent.basic-auth.credentials-source": "USER_INFO",
                                                     "value.avro-confluent.basic-auth.user-info": "svc:pa55word"}))
        value = RowEncoder(ok.value_format, ["id", "name"], columns).encode(rows)[0]
        client = SchemaRegistryClient({"url": server.url, "basic.auth.user.info": "svc:pa55word"})
        assert AvroDeserializer(client)(value, ctx("orders")) == {"id": 1, "name": "a"}
        wrong = sink_config(sink_options(server.url, "other", **{"value.avro-confluent.basic-auth.user-info": "svc:WRONGpw"}))
        with pytest.raises(SchemaRegistryError) as refused:
            RowEncoder(wrong.value_format, ["id", "name"], columns).encode(rows)
        message = str(refused.value)
        assert "HTTP 401" in message and "value.avro-confluent.basic-auth.user-info" in message
        assert "WRONGpw" not in message and "pa55word" not in message
        # Credentials in the URL ('credentials-source' = 'URL') work too, and never show in errors.
        in_url = server.url.replace("http://", "http://svc:pa55word@")
        by_url = source_config(source_options(in_url, **{"avro-confluent.basic-auth.credentials-source": "URL"}))
        assert "pa55word" not in repr(by_url)
        decoded = ValueDecoder(columns, by_url.value_format).decode([value])
        assert not decoded.errors and decoded.arrays[0].to_pylist() == [1]


def test_sql_ddl_round_trip_with_confluent_interop(env, kafka, topic, schema_registry):
    """Records from confluent's AvroSerializer (two schema versions) -> SQL INSERT -> key and value in
    avro-confluent -> confluent's AvroDeserializer reads them."""
    client = SchemaRegistryClient({"url": schema_registry.url})
    first, second = AvroSerializer(client, json.dumps(USER_V1)), AvroSerializer(client, json.dumps(USER_V2))
    records = [(i % 4, (first if i % 2 else second)({"id": i, "name": f"n{i}", "email": f"{i}@x"}, ctx(topic)))
               for i in range(40)]
    produce(kafka.bootstrap_servers, topic, records)
    out = topic + "-out"
    kafka.create_topic(out, partitions=2)
    try:
        url = schema_registry.url
        script = f"""
        CREATE TABLE users (id BIGINT, name STRING) WITH (
          'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{kafka.bootstrap_servers}',
          'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset',
          'value.format' = 'avro-confluent', 'value.avro-confluent.url' = '{url}');
        CREATE TABLE shouted (id BIGINT, loud STRING) WITH (
          'connector' = 'kafka', 'topic' = '{out}', 'properties.bootstrap.servers' = '{kafka.bootstrap_servers}',
          'key.format' = 'avro-confluent', 'key.fields' = 'id', 'key.avro-confluent.url' = '{url}',
          'value.format' = 'avro-confluent', 'value.avro-confluent.url' = '{url}', 'value.fields-include' = 'EXCEPT_KEY');
        INSERT INTO shouted SELECT id, UPPER(name) AS loud FROM users;
        """
        result = env.sql_session().execute_script(script)[-1]
        assert result.wait(timeout=300) == "FINISHED"
        messages = read_back(kafka.bootstrap_servers, out, expected=40, timeout=60)
        keys = AvroDeserializer(client)
        values = AvroDeserializer(client)
        got = sorted((keys(m.key(), ctx(out, MessageField.KEY))["id"], values(m.value(), ctx(out))["loud"]) for m in messages)
        assert got == [(i, f"N{i}") for i in range(40)]
        assert {f"{out}-key", f"{out}-value"} <= set(client.get_subjects())
        assert [f["name"] for f in json.loads(client.get_latest_version(f"{out}-value").schema.schema_str)["fields"]] == ["loud"]
    finally:
        kafka.delete_topic(out)


def test_datastream_round_trip_and_a_record_without_magic_byte(env, spark, kafka, topic, schema_registry, tmp_path):
    from pyspark.sql import Row

    schema = _parse_datatype_string(COLUMNS)
    env.from_collection([tuple(r.values()) for r in ROWS], schema).sink_to(
        KafkaSink.builder().set_bootstrap_servers(kafka.bootstrap_servers).set_topic(topic)
        .set_value_format("avro-confluent").set_option("value.avro-confluent.url", schema_registry.url).build())
    env.execute("avro-confluent-write")
    source = (KafkaSource.builder().set_bootstrap_servers(kafka.bootstrap_servers).set_topics(topic)
              .set_starting_offsets(KafkaOffsetsInitializer.earliest()).set_bounded(KafkaOffsetsInitializer.latest())
              .set_value_format("avro-confluent").set_option("value.avro-confluent.url", schema_registry.url)
              .set_schema(schema).build())
    back = sorted(env.from_source(source).execute_and_collect(timeout=180), key=lambda r: r.id)
    assert [(r.id, r.name, r.score) for r in back] == [(1, "ada", 1.5), (2, None, None)]
    assert back[0].ts.replace(tzinfo=None) == datetime(2026, 11, 22, 1, 2, 3, 123000)
    assert isinstance(back[0], Row)
    # A plain JSON record in the topic: the read fails naming topic, partition and offset.
    [(partition, offset)] = produce(kafka.bootstrap_servers, topic, [(3, b'{"id": 3}')])
    reader = (spark.readStream.format("kindling_kafka").schema(with_eos(schema))
              .options(**source_options(schema_registry.url, topic, **{
                  "properties.bootstrap.servers": kafka.bootstrap_servers, "scan.startup.mode": "earliest-offset"}))
              .load())
    with pytest.raises(Exception) as info:
        run_available_now(spark, reader, str(tmp_path / "bad"))
    message = str(info.value)
    assert f"topic '{topic}' partition {partition} offset {offset}" in message and "magic byte 0" in message, message[-2000:]
