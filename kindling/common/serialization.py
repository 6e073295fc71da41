"""PyFlink's serialization schemas and encoders, as the formats kindling's connectors read and write."""

from __future__ import annotations

from typing import Any, Optional

from kindling.connectors.filesystem.builder import Encoder


class SerializationSchema:
    """How a record becomes bytes in a sink; ``format`` is the connector format it stands for."""

    format = "raw"


class DeserializationSchema:
    """How bytes from a source become a record; ``format`` is the connector format it stands for."""

    format = "raw"


class SimpleStringSchema(SerializationSchema, DeserializationSchema):
    """Records are UTF-8 strings (the ``raw`` format of one STRING field)."""

    def __init__(self, charset: str = "UTF-8") -> None:
        if charset.upper().replace("-", "") != "UTF8":
            raise ValueError(f"SimpleStringSchema: kindling reads and writes UTF-8 only, got charset {charset!r}")


class JsonRowSerializationSchema(SerializationSchema):
    """Records as JSON objects (the ``json`` format)."""

    format = "json"

    def __init__(self, type_info: Any = None) -> None:
        self.type_info = type_info

    @staticmethod
    def builder() -> "JsonRowSerializationSchema._Builder":
        return JsonRowSerializationSchema._Builder(JsonRowSerializationSchema)

    class _Builder:
        def __init__(self, kind: Any) -> None:
            self._kind = kind
            self._type_info: Optional[Any] = None

        def with_type_info(self, type_info: Any) -> "JsonRowSerializationSchema._Builder":
            self._type_info = type_info
            return self

        def ignore_parse_errors(self) -> "JsonRowSerializationSchema._Builder":
            return self

        def fail_on_missing_field(self) -> "JsonRowSerializationSchema._Builder":
            return self

        def build(self) -> Any:
            return self._kind(self._type_info)


class JsonRowDeserializationSchema(DeserializationSchema):
    """JSON objects as records (the ``json`` format)."""

    format = "json"

    def __init__(self, type_info: Any = None) -> None:
        self.type_info = type_info

    @staticmethod
    def builder() -> "JsonRowSerializationSchema._Builder":
        return JsonRowSerializationSchema._Builder(JsonRowDeserializationSchema)


__all__ = ["DeserializationSchema", "Encoder", "JsonRowDeserializationSchema", "JsonRowSerializationSchema",
           "SerializationSchema", "SimpleStringSchema"]
