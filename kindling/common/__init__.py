"""PyFlink's ``pyflink.common``: types, rows, time, configuration, watermark strategies and serialization schemas.

One implementation with PyFlink's names: ``Configuration`` is kindling's, ``WatermarkStrategy``
and ``TimestampAssigner`` are kindling.datastream's, ``Encoder`` is the file sink's, the serialization
schemas are kindling's record formats (``kindling.common.serialization``).
"""

from __future__ import annotations

from enum import Enum

from kindling.common.row import Row, RowKind
from kindling.common.serialization import (
    ByteArraySchema,
    DeserializationSchema,
    Encoder,
    RowFieldExtractorSchema,
    SerializationSchema,
    SimpleStringSchema,
)
from kindling.common.time import Duration, Instant, Time
from kindling.common.typeinfo import TypeInformation, TypeMismatchError, Types
from kindling.config import Configuration
from kindling.datastream.watermarks import TimestampAssigner, WatermarkStrategy


class RuntimeExecutionMode(Enum):
    """``execution.runtime-mode``: STREAMING, BATCH or AUTOMATIC."""

    STREAMING = 0
    BATCH = 1
    AUTOMATIC = 2


class ExecutionConfig:
    """PyFlink's ``env.get_config()``: a view of the environment's configuration."""

    def __init__(self, configuration: Configuration) -> None:
        self._configuration = configuration

    def set_auto_watermark_interval(self, interval: int) -> "ExecutionConfig":
        self._configuration.set("pipeline.auto-watermark-interval", interval)
        return self

    def get_auto_watermark_interval(self) -> int:
        from kindling.durations import to_millis

        return to_millis(self._configuration.get("pipeline.auto-watermark-interval"))

    def set_parallelism(self, parallelism: int) -> "ExecutionConfig":
        self._configuration.set("parallelism.default", parallelism)
        return self

    def get_parallelism(self) -> int:
        return self._configuration.get("parallelism.default") or -1

    def enable_object_reuse(self) -> "ExecutionConfig":
        self._configuration.set("pipeline.object-reuse", True)
        return self

    def disable_object_reuse(self) -> "ExecutionConfig":
        self._configuration.set("pipeline.object-reuse", False)
        return self

    def is_object_reuse_enabled(self) -> bool:
        return bool(self._configuration.get("pipeline.object-reuse"))

    def get_global_job_parameters(self) -> dict:
        return self._configuration.to_dict()

    def set_global_job_parameters(self, parameters: dict) -> "ExecutionConfig":
        return self


__all__ = [
    "ByteArraySchema", "Configuration", "DeserializationSchema", "Duration", "Encoder", "ExecutionConfig", "Instant",
    "Row", "RowFieldExtractorSchema", "RowKind", "RuntimeExecutionMode", "SerializationSchema", "SimpleStringSchema", "Time",
    "TimestampAssigner", "TypeInformation", "TypeMismatchError", "Types", "WatermarkStrategy",
]
