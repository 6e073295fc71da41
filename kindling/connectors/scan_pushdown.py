"""Which columns and filters one table scan needs, told by the SQL planner to the scan's reader.

A Python Data Source is planned by Spark with every column of its schema and, in a streaming query, no
filters at all (``pushFilters`` exists for batch reads only). The SQL planner knows better: once a query
is planned, the optimized plan says which of a table's columns any operator reads and which conditions
filter the scan's rows first. It declares them here per scan (``TABLE_SCAN``, a fresh id per scan of a
table); a reader that can use them (jdbc: ``SELECT`` only those columns, ``WHERE`` the conditions the
database answers exactly) reads the declaration on the driver when it plans its splits, and ships it to
the executors in the splits. Columns the query does not read come back as nulls; Spark still applies every
filter after the scan, so a prefilter only has to keep at least Spark's rows.

The declarations are files in a directory scoped to the Spark application, as ``watermark_use``'s marks are.
"""

from __future__ import annotations

import datetime
import decimal
import json
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

# A filter as declared: {"op": EqualTo|LessThan|...|In|IsNull|IsNotNull|Not, "column": name, "value": v, "child": {...}}
FilterSpec = dict


@dataclass(frozen=True)
class ScanNeeds:
    """The columns a scan's query reads (None: all) and the conjuncts that filter its rows first."""

    columns: Optional[tuple[str, ...]]
    filters: tuple[FilterSpec, ...]

    def spark_filters(self) -> list[Any]:
        """The filters as PySpark's Data Source filters (what ``pushFilters`` receives in a batch read)."""
        return [f for f in (_spark_filter(spec) for spec in self.filters) if f is not None]


def _directory() -> Path:
    scope = os.environ.get("KINDLING_SESSION_ID", "default")
    return Path(tempfile.gettempdir()) / "kindling-scan-pushdown" / scope


def _file(scan_id: str) -> Path:
    return _directory() / f"{re.sub(r'[^A-Za-z0-9_-]+', '-', scan_id)}.json"


def declare(scan_id: str, columns: Optional[Sequence[str]], filters: Sequence[FilterSpec]) -> None:
    """Declare what a scan needs (written atomically: a reader sees all of it or nothing)."""
    target = _file(scan_id)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.tmp")
    partial.write_text(json.dumps({"columns": list(columns) if columns is not None else None, "filters": list(filters)},
                                  default=_encode))
    os.replace(partial, target)


def needs(scan_id: Optional[str]) -> ScanNeeds:
    """What the scan ``scan_id`` needs; every column and no filter when nothing was declared."""
    if not scan_id:
        return ScanNeeds(None, ())
    try:
        declared = json.loads(_file(scan_id).read_text())
    except (OSError, ValueError):
        return ScanNeeds(None, ())
    columns = declared.get("columns")
    return ScanNeeds(tuple(columns) if columns is not None else None, tuple(declared.get("filters") or ()))


def _encode(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return {"decimal": str(value)}
    if isinstance(value, datetime.date):
        return {"date": value.isoformat()}
    raise TypeError(f"cannot declare a filter value {value!r}")


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        return decimal.Decimal(value["decimal"]) if "decimal" in value else datetime.date.fromisoformat(value["date"])
    return value


def _spark_filter(spec: FilterSpec) -> Any:
    from pyspark.sql import datasource

    op = spec.get("op")
    if op == "Not":
        child = _spark_filter(spec["child"])
        return None if child is None else datasource.Not(child)
    kind = getattr(datasource, str(op), None)
    if kind is None:
        return None
    attribute = (spec["column"],)
    if op in ("IsNull", "IsNotNull"):
        return kind(attribute)
    if op == "In":
        return kind(attribute, tuple(_decode(v) for v in spec["value"]))
    return kind(attribute, _decode(spec["value"]))
