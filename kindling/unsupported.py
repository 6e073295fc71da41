"""PyFlink names kindling does not implement: they fail where they are used, naming the API and what to use instead.

:mod:`kindling.pyflink_compat` hands out an :class:`UnsupportedPyFlinkAPI` for every ``pyflink`` name
kindling lacks; kindling's own PyFlink-faced classes use it for their unsupported methods, so the
message is the same wherever a program meets the gap.
"""

from __future__ import annotations

from typing import Any

# What to use instead of PyFlink APIs kindling does not have (the longest matching prefix wins).
ADVICE: dict[str, str] = {
    "pyflink.table": "kindling's Table API (kindling.table) or Flink SQL through t_env.execute_sql(...)",
    "pyflink.datastream.connectors.elasticsearch": "use kindling's SQL connectors (kindling.connectors)",
    "pyflink.datastream.connectors.pulsar": "kindling has no Pulsar connector; use Kafka (kindling.datastream.connectors.kafka)",
    "pyflink.datastream.connectors.kinesis": "kindling's Kinesis DataStream API is FlinkKinesisConsumer (env.add_source) and "
                                             "KinesisStreamsSink.builder(); the SQL connector is 'kinesis'",
    "pyflink.datastream.connectors.jdbc": "use kindling's SQL connectors (kindling.connectors)",
    "pyflink.datastream.connectors.kafka.FlinkKafka": "Flink 2 removed FlinkKafkaConsumer/FlinkKafkaProducer; use KafkaSource.builder() "
                                                     "and KafkaSink.builder()",
    "pyflink.datastream.connectors.kafka.KafkaRecordSerializationSchemaBuilder.set_topic_selector":
        "kindling's Kafka sink writes one topic: set_topic(...), one sink per topic (filter the stream for each)",
    "pyflink.datastream.connectors.kafka.KafkaSourceBuilder.set_partitions":
        "read whole topics with set_topics(...), or start at given offsets with KafkaOffsetsInitializer.offsets({...})",
    "pyflink.datastream.formats": "kindling's record formats are json, csv, raw and avro (kindling.formats): the JsonRow*/CsvRow* "
                                  "serialization schemas, SimpleStringSchema, ByteArraySchema, or a format by name in a "
                                  "connector's builder (set_value_format('json'|'csv'|'avro'|'raw'))",
    "pyflink.datastream.formats.csv": "kindling's csv format takes a field delimiter, a line delimiter and ignore-parse-errors; "
                                      "files in csv: FileSource.for_record_stream_format('csv', path) / FileSink.for_row_format(path, 'csv')",
    "pyflink.datastream.formats.json.JsonRowDeserializationSchema.Builder.json_schema":
        "give the records' type instead: .type_info(Types.ROW_NAMED([...], [...]))",
    "pyflink.datastream.formats.parquet": "Parquet files through FileSink.for_bulk_format(path, 'parquet') and "
                                          "FileSource.for_bulk_file_format('parquet', path)",
    "pyflink.datastream.formats.orc": "kindling has no ORC format; use Parquet (FileSink.for_bulk_format(path, 'parquet'))",
}


class UnsupportedPyFlinkAPI:
    """Stands for a PyFlink name kindling does not implement: any use raises a message naming it."""

    def __init__(self, name: str) -> None:
        object.__setattr__(self, "_name", name)

    def _fail(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(unsupported_message(object.__getattribute__(self, "_name")))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._fail()

    def __getattr__(self, item: str) -> Any:
        if item.startswith("__") and item.endswith("__"):
            raise AttributeError(item)
        return UnsupportedPyFlinkAPI(f"{object.__getattribute__(self, '_name')}.{item}")

    def __mro_entries__(self, bases: tuple) -> tuple:
        # ``class X(UnsupportedName): ...`` defines a class; instantiating it fails with the message.
        name = object.__getattribute__(self, "_name")

        class Unsupported:
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                raise NotImplementedError(unsupported_message(name))

            def __class_getitem__(cls, parameters: Any) -> Any:
                return cls

        return (Unsupported,)

    def __getitem__(self, item: Any) -> Any:
        return self

    def __repr__(self) -> str:
        return f"<PyFlink API {object.__getattribute__(self, '_name')} (not supported by kindling)>"


def unsupported_message(name: str) -> str:
    advice = next((text for prefix, text in sorted(ADVICE.items(), key=lambda kv: -len(kv[0])) if name.startswith(prefix)), None)
    return (f"{name} is a PyFlink API that kindling does not support"
            + (f": {advice}" if advice else "; see kindling's README for the DataStream and SQL APIs it has"))


__all__ = ["ADVICE", "UnsupportedPyFlinkAPI", "unsupported_message"]
