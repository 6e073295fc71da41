"""Flink's ``nexmark`` source: the Nexmark auction benchmark's persons, auctions and bids.

Use it from SQL as the Nexmark suite does (``'connector' = 'nexmark'``, with ``events.num``,
``first-event.rate`` and the suite's other options; see ``benchmarks/nexmark/ddl.sql``), or
from Python::

    env.from_source(Source("nexmark", {"events.num": 1_000_000}),
                    WatermarkStrategy.for_bounded_out_of_orderness("4 s").with_timestamp_assigner("dateTime"))

Without a schema the source produces the Flink Nexmark table's columns ``event_type``,
``person``, ``auction``, ``bid`` plus ``dateTime`` (the event's time). Options and their
defaults are the suite's (``kindling.connectors.nexmark.config``); the generator is in
``kindling.connectors.nexmark.generator``.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from pyspark.sql.types import StructType

from kindling.connectors.base import Connector
from kindling.connectors.nexmark.config import SOURCE_OPTIONS, GeneratorConfig, max_events, validate
from kindling.connectors.nexmark.generator import generate
from kindling.connectors.nexmark.source import NEXMARK_SCHEMA, NexmarkDataSource, NexmarkStreamReader
from kindling.options import ParsedOptions

# The suite's DDL declares ``WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND``.
WATERMARK_DELAY = "4 s"


class NexmarkConnector(Connector):
    name = "nexmark"
    data_source = NexmarkDataSource
    source_options = SOURCE_OPTIONS

    @classmethod
    def validate_source(cls, options: Mapping[str, Any]) -> ParsedOptions:
        return validate(options)

    @classmethod
    def is_bounded(cls, options: ParsedOptions) -> bool:
        return max_events(options) is not None

    @classmethod
    def default_schema(cls, options: ParsedOptions) -> Optional[StructType]:
        return NEXMARK_SCHEMA


CONNECTOR = NexmarkConnector

__all__ = ["CONNECTOR", "NEXMARK_SCHEMA", "WATERMARK_DELAY", "GeneratorConfig", "NexmarkConnector", "NexmarkStreamReader", "generate"]
