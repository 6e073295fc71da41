"""PyFlink's ``NumberSequenceSource``: the numbers from..to (inclusive) as a bounded stream of LONG records."""

from __future__ import annotations

from pyspark.sql.types import LongType, StructField, StructType

from kindling.connectors.base import Source


def NumberSequenceSource(start: int, end: int) -> Source:  # noqa: N802 - PyFlink's class name
    """A bounded source of ``start``..``end``, on the datagen connector's sequence generator."""
    from kindling.common.typeinfo import Types

    if end < start:
        raise ValueError(f"NumberSequenceSource: end ({end}) must not be smaller than start ({start})")
    source = Source("datagen", {"fields.f0.kind": "sequence", "fields.f0.start": str(start), "fields.f0.end": str(end)},
                    StructType([StructField("f0", LongType(), False)]))
    source.type_info = Types.LONG()  # type: ignore[attr-defined]  # records are the numbers themselves
    return source
