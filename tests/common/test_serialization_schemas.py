"""PyFlink's serialization schemas as kindling's formats (no Spark session): the bytes they make are Flink's (the
messages Flink's own schemas made of the wheel's Kafka examples' records, recorded from PyFlink), they read those
bytes back, and they refuse records of another type where Flink's would fail."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from kindling.common.serialization import ByteArraySchema, RowFieldExtractorSchema, SimpleStringSchema
from kindling.common.typeinfo import Types
from kindling.connectors.filesystem.formats import text_lines
from kindling.connectors.kafka.builder import KafkaRecordSerializationSchema
from kindling.datastream.formats.csv import CsvRowDeserializationSchema, CsvRowSerializationSchema
from kindling.datastream.formats.json import JsonRowDeserializationSchema, JsonRowSerializationSchema
from kindling.formats import FormatSettings, RowEncoder
from kindling.formats.decoding import ValueDecoder

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datastream"))
from pyflink_examples import messages_reference_name, reference_dir  # noqa: E402

# The records the wheel's kafka_json_format.py and kafka_csv_format.py write (their input, not a result).
RECORDS = [(1, 'hi'), (2, 'hello'), (3, 'hi'), (4, 'hello'), (5, 'hi'), (6, 'hello'), (6, 'hello')]
ROW = Types.ROW([Types.INT(), Types.STRING()])


def flink_values(program: str) -> list[bytes]:
    recorded = json.loads((reference_dir() / messages_reference_name(program)).read_text())
    return [m["value"].encode("utf-8") for m in recorded["messages"]]


def settings(schema) -> FormatSettings:
    options = schema.format_options()
    return FormatSettings(schema.format, field_delimiter=options.get("csv.field-delimiter", ","),
                          line_delimiter=options.get("csv.line-delimiter", ""))


def batch() -> pa.RecordBatch:
    return pa.RecordBatch.from_arrays([pa.array([r[0] for r in RECORDS], pa.int32()), pa.array([r[1] for r in RECORDS])],
                                      names=["f0", "f1"])


@pytest.mark.parametrize("program, writer, reader", [
    ("connectors/kafka_json_format.py", JsonRowSerializationSchema.Builder().with_type_info(ROW).build(),
     JsonRowDeserializationSchema.Builder().type_info(ROW).build()),
    ("connectors/kafka_csv_format.py", CsvRowSerializationSchema.Builder(ROW).build(), CsvRowDeserializationSchema.Builder(ROW).build()),
])
def test_row_schemas_write_flinks_bytes_and_read_them_back(program, writer, reader):
    assert [f.name for f in writer.written_fields(ROW, ROW.record_schema())] == ["f0", "f1"]
    assert RowEncoder(settings(writer), ["f0", "f1"]).encode(batch()) == flink_values(program)
    decoded = ValueDecoder(reader.produced_type().record_schema(), settings(reader)).decode(flink_values(program))
    assert not decoded.errors
    assert list(zip(*(a.to_pylist() for a in decoded.arrays))) == RECORDS


def test_schemas_refuse_records_of_another_type():
    strings = Types.STRING()
    with pytest.raises(TypeError, match="JsonRowSerializationSchema serializes records of"):
        JsonRowSerializationSchema(ROW).written_fields(strings, strings.record_schema())
    with pytest.raises(TypeError, match="ByteArraySchema serializes bytes records"):
        ByteArraySchema().written_fields(strings, strings.record_schema())
    with pytest.raises(TypeError, match="SimpleStringSchema serializes str records"):
        SimpleStringSchema().written_fields(ROW, ROW.record_schema())
    with pytest.raises(TypeError, match="Field at index 1 must be of type byte"):
        RowFieldExtractorSchema(1).written_fields(ROW, ROW.record_schema())
    with pytest.raises(ValueError, match="Cannot access field 2 in Row with arity 2"):
        RowFieldExtractorSchema(2).written_fields(ROW, ROW.record_schema())
    with pytest.raises(ValueError, match="No value serializer"):
        KafkaRecordSerializationSchema.builder().set_topic("t").build()
    with pytest.raises(ValueError, match="Unsupported new line delimiter"):
        CsvRowSerializationSchema.Builder(ROW).set_line_delimiter(";")


def test_text_lines_are_javas_read_line():
    assert text_lines(b"a\n\nb\r\nc\rd") == [b"a", b"", b"b", b"c", b"d"]
    assert text_lines(b"a\n") == [b"a"] and text_lines(b"\n") == [b""] and text_lines(b"") == []


# Text cells and the line Flink 2.3's CsvRowSerializationSchema (Jackson) wrote for them after the row's INT field,
# recorded through PyFlink's gateway: quoted when longer than 24 UTF-16 units or holding a character up to ',', a
# backslash or a quote; null and empty text both written as nothing.
FLINK_CSV_TEXT = [
    ("hi", b"0,hi\n"), ("", b"1,\n"), (None, b"2,\n"), ("a b", b'3,"a b"\n'), ("a,b", b'4,"a,b"\n'), ('a"b', b'5,"a""b"\n'),
    ("a\nb", b'6,"a\nb"\n'), ("x" * 24, b"7," + b"x" * 24 + b"\n"), ("x" * 25, b'8,"' + b"x" * 25 + b'"\n'), ("-x", b"9,-x\n"),
    ("#x", b'10,"#x"\n'), ("é", "11,é\n".encode()), (" lead", b'12," lead"\n'), ("a-b", b"13,a-b\n"), ("ab!", b'14,"ab!"\n'),
    ("a.b", b"15,a.b\n"), ("a;b", b"16,a;b\n"), ("a\tb", b'17,"a\tb"\n'), ("a\\b", b'18,"a\\b"\n'), ("a/b", b"19,a/b\n"),
    ("\U0001F600" * 12, ("20," + "\U0001F600" * 12 + "\n").encode()), ("\U0001F600" * 13, ('21,"' + "\U0001F600" * 13 + '"\n').encode()),
]


def test_csv_text_is_quoted_where_flink_quotes_it():
    texts = [t for t, _ in FLINK_CSV_TEXT]
    rows = pa.RecordBatch.from_arrays([pa.array(range(len(texts)), pa.int32()), pa.array(texts, pa.string())], names=["f0", "f1"])
    assert RowEncoder(settings(CsvRowSerializationSchema(ROW)), ["f0", "f1"]).encode(rows) == [line for _, line in FLINK_CSV_TEXT]
    # With ';' between fields, Flink quoted every character up to ';' and no longer ','s alone beyond it: "a;b";"a,b" / "a b";a|b
    semicolon = FormatSettings("csv", field_delimiter=";")
    pair = pa.RecordBatch.from_arrays([pa.array(["a;b", "a b"]), pa.array(["a,b", "a|b"])], names=["a", "b"])
    assert RowEncoder(semicolon, ["a", "b"]).encode(pair) == [b'"a;b";"a,b"', b'"a b";a|b']


def test_row_schemas_refuse_types_whose_text_is_not_flinks():
    with pytest.raises(NotImplementedError, match="field 'f0' is Types.DOUBLE"):
        CsvRowSerializationSchema.Builder(Types.ROW([Types.DOUBLE()])).build()
    with pytest.raises(NotImplementedError, match="JsonRowSerializationSchema: field 'f1'"):
        JsonRowSerializationSchema(Types.ROW([Types.INT(), Types.SQL_TIMESTAMP()]))


NULLABLE_SCHEMA = ('{"type": "record", "name": "R", "fields": [{"name": "id", "type": ["null", "long"]}, '
                   '{"name": "ok", "type": "boolean"}, {"name": "score", "type": "double"}]}')


def test_avro_row_schemas_write_the_given_schema_and_read_it_back():
    from kindling.datastream.formats.avro import AvroRowDeserializationSchema, AvroRowSerializationSchema

    writer, reader = AvroRowSerializationSchema(avro_schema_string=NULLABLE_SCHEMA), AvroRowDeserializationSchema(avro_schema_string=NULLABLE_SCHEMA)
    assert writer.row_type == reader.produced_type() == Types.ROW_NAMED(["id", "ok", "score"], [Types.LONG(), Types.BOOLEAN(), Types.DOUBLE()])
    rows = pa.RecordBatch.from_arrays([pa.array([7, None]), pa.array([True, False]), pa.array([0.5, -2.0])], names=["id", "ok", "score"])
    encoded = RowEncoder(FormatSettings("avro", avro_schema=writer.format_options()["avro.schema"]), ["id", "ok", "score"],
                         writer.row_type.record_schema()).encode(rows)
    # The union's branch index (1: long, 0: null), then the value; a boolean is one byte, a double eight little-endian.
    assert encoded == [bytes.fromhex("02" "0e" "01" "000000000000e03f"), bytes.fromhex("00" "00" "00000000000000c0")]
    read_settings = FormatSettings("avro", avro_schema=reader.format_options()["avro.schema"])
    decoded = ValueDecoder(reader.produced_type().record_schema(), read_settings).decode(encoded)
    assert not decoded.errors and [a.to_pylist() for a in decoded.arrays] == [[7, None], [True, False], [0.5, -2.0]]


def test_avro_row_schemas_refuse_what_kindling_cannot_read_or_write():
    from kindling.datastream.formats.avro import AvroRowSerializationSchema

    with pytest.raises(NotImplementedError, match="SpecificRecord classes are Java classes"):
        AvroRowSerializationSchema(record_class="com.example.User")
    with pytest.raises(NotImplementedError, match="field 'tags' is of Avro type"):
        AvroRowSerializationSchema(avro_schema_string='{"type": "record", "name": "R", "fields": [{"name": "tags", '
                                                      '"type": {"type": "array", "items": "string"}}]}')
    with pytest.raises(ValueError, match="must be an Avro record schema"):
        AvroRowSerializationSchema(avro_schema_string='"string"')
    with pytest.raises(TypeError, match="AvroRowSerializationSchema serializes records of"):
        AvroRowSerializationSchema(avro_schema_string=NULLABLE_SCHEMA).written_fields(ROW, ROW.record_schema())
