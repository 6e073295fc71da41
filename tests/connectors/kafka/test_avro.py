"""The 'avro' format: Flink's derived Avro schema, values round-trip through Kafka, and any Avro reader reads them."""

from __future__ import annotations

import io
from datetime import date, datetime, timezone
from decimal import Decimal

import fastavro
import pyarrow as pa
import pytest
from pyspark.sql.types import _parse_datatype_string

from kindling.arrow import arrow_schema
from kindling.connectors.kafka import KafkaOffsetsInitializer, KafkaSink, KafkaSource
from kindling.formats import FormatSettings, RowEncoder, ValueDecoder
from kindling.formats.avro import avro_schema

COLUMNS = ("id BIGINT NOT NULL, name STRING, price DECIMAL(10,2), day DATE, ts TIMESTAMP, "
           "tags ARRAY<STRING>, attrs MAP<STRING, INT>, buyer STRUCT<city: STRING, age: INT>, flag BOOLEAN, raw BINARY")
ROWS = [
    {"id": 1, "name": "kettle", "price": Decimal("19.99"), "day": date(2026, 11, 22),
     "ts": datetime(2026, 11, 22, 1, 2, 3, 123000, tzinfo=timezone.utc), "tags": ["home", None],
     "attrs": [("a", 1)], "buyer": {"city": "Berlin", "age": 41}, "flag": True, "raw": b"\x00\x01"},
    {"id": 2, "name": None, "price": None, "day": None, "ts": None, "tags": None, "attrs": None, "buyer": None,
     "flag": None, "raw": None},
]


def spark_schema(spark):
    return _parse_datatype_string(COLUMNS)


def test_schema_is_flinks(spark):
    schema = avro_schema(_parse_datatype_string("id BIGINT NOT NULL, name STRING, ts TIMESTAMP, buyer STRUCT<city: STRING>"))
    assert schema == {
        "type": "record", "name": "record", "namespace": "org.apache.flink.avro.generated",
        "fields": [
            {"name": "id", "type": "long"},
            {"name": "name", "type": ["null", "string"], "default": None},
            {"name": "ts", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}], "default": None},
            {"name": "buyer", "type": ["null", {"type": "record", "name": "record_buyer", "namespace": "org.apache.flink.avro.generated",
                                                "fields": [{"name": "city", "type": ["null", "string"], "default": None}]}],
             "default": None},
        ],
    }


def test_values_round_trip_and_any_avro_reader_reads_them(spark):
    schema = spark_schema(spark)
    batch = pa.RecordBatch.from_pylist(ROWS, schema=arrow_schema(schema))
    settings = FormatSettings("avro")
    values = RowEncoder(settings, schema.names, schema).encode(batch)
    parsed = fastavro.parse_schema(avro_schema(schema))
    first = fastavro.schemaless_reader(io.BytesIO(values[0]), parsed, None)
    assert first["name"] == "kettle" and first["price"] == Decimal("19.99") and first["buyer"] == {"city": "Berlin", "age": 41}
    assert first["ts"] == datetime(2026, 11, 22, 1, 2, 3, 123000, tzinfo=timezone.utc)
    decoded = ValueDecoder(schema, settings).decode(values)
    assert not decoded.errors
    back = pa.RecordBatch.from_arrays(decoded.arrays, schema=arrow_schema(schema)).to_pylist()
    assert back == ROWS
    bad = ValueDecoder(schema, settings).decode([values[0], b"\x07garbage"])
    assert [i for i, _ in bad.errors] == [1] and "Avro" in bad.errors[0][1]


@pytest.mark.integration
def test_avro_through_kafka(env, kafka, topic):
    from pyspark.sql import Row

    schema = _parse_datatype_string(COLUMNS.rsplit(",", 1)[0])  # the collection source cannot carry BINARY
    rows = [tuple(r.values())[:-1] for r in ROWS]
    rows = [r[:6] + (dict(r[6]) if r[6] else None,) + (Row(**r[7]) if r[7] else None,) + r[8:] for r in rows]
    env.from_collection(rows, schema).sink_to(
        KafkaSink.builder().set_bootstrap_servers(kafka.bootstrap_servers).set_topic(topic).set_value_format("avro").build())
    env.execute("avro-write")
    source = (KafkaSource.builder().set_bootstrap_servers(kafka.bootstrap_servers).set_topics(topic)
              .set_starting_offsets(KafkaOffsetsInitializer.earliest()).set_bounded(KafkaOffsetsInitializer.latest())
              .set_value_format("avro").set_schema(schema).build())
    back = sorted(env.from_source(source).execute_and_collect(timeout=180), key=lambda r: r.id)
    assert [r.id for r in back] == [1, 2]
    assert back[0].price == Decimal("19.99") and back[0].buyer.city == "Berlin" and back[0].attrs == {"a": 1}
    assert back[0].ts.replace(tzinfo=None) == datetime(2026, 11, 22, 1, 2, 3, 123000)
    assert back[1].name is None and back[1].buyer is None
