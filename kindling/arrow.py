"""Spark ↔ Arrow schema conversion with kindling's conventions (timestamps are UTC)."""

from __future__ import annotations

import pyarrow as pa
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType


def arrow_schema(schema: StructType) -> pa.Schema:
    """The Arrow schema Spark expects for batches of ``schema`` (TIMESTAMP as timestamp[us, UTC])."""
    return to_arrow_schema(schema, timezone="UTC")
