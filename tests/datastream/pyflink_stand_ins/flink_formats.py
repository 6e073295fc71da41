"""Flink's own serialization schemas, called through PyFlink's gateway, for the stand-ins of the Kafka examples.

Each stand-in runs under the real PyFlink 2.3 (``make datastream-reference``, never in ``make test``). The
KafkaSink and KafkaSource would call these Java schemas on each record; a stand-in calls them itself, in the
client, on the example's own records: the messages are Flink's bytes, and the records read back are Flink's.
"""

from __future__ import annotations

import json
import os
from typing import Any, Optional, Sequence

from pyflink.java_gateway import get_gateway


def java_row(values: Sequence[Any]) -> Any:
    row = get_gateway().jvm.org.apache.flink.types.Row(len(values))
    for index, value in enumerate(values):
        row.setField(index, value)
    return row


def python_values(java_value: Any) -> Any:
    """A deserialized Java Row as a tuple of its fields (other values as they are)."""
    if hasattr(java_value, "getArity"):
        return tuple(python_values(java_value.getField(i)) for i in range(java_value.getArity()))
    return bytes(java_value) if isinstance(java_value, bytearray) else java_value


def serialize(schema: Any, records: Sequence[Any], rows: bool = True) -> list[Optional[bytes]]:
    """The messages the schema (a PyFlink SerializationSchema) makes of the records (tuples as Rows)."""
    java = schema._j_serialization_schema
    java.open(None)
    return [None if m is None else bytes(m) for m in (java.serialize(java_row(r) if rows else r) for r in records)]


def deserialize(schema: Any, messages: Sequence[bytes]) -> list[Any]:
    """The records the schema (a PyFlink DeserializationSchema) reads from the messages, as Python values."""
    java = schema._j_deserialization_schema
    java.open(None)
    return [python_values(java.deserialize(m)) for m in messages]


def save_messages(topic: str, values: Sequence[Optional[bytes]], keys: Optional[Sequence[Optional[bytes]]] = None) -> None:
    """Keep the topic's messages (UTF-8 text) in the file named by $KINDLING_REFERENCE_MESSAGES, if set."""
    target = os.environ.get("KINDLING_REFERENCE_MESSAGES")
    if not target:
        return
    text = [None if v is None else v.decode("utf-8") for v in values]
    key_text = [None if k is None else k.decode("utf-8") for k in keys] if keys is not None else [None] * len(values)
    with open(target, "w") as out:
        json.dump({"topic": topic, "messages": [{"key": k, "value": v} for k, v in zip(key_text, text)]}, out, indent=1)
        out.write("\n")
