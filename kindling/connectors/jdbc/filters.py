"""Filter pushdown into the jdbc scan: the WHERE conditions the database applies before Spark does.

Spark hands a batch read the conjuncts of its filter (``DataSourceReader.pushFilters``). Those the database
is sure to answer with *at least* Spark's rows become the scan's ``WHERE``; Spark still evaluates every
filter afterwards, so the answer is Spark's exactly and the database only spares the transfer of rows Spark
would drop. Hence what is pushed, by column type:

* integers, decimals, dates: ``=``, ``<``, ``<=``, ``>``, ``>=``, ``IN``, their ``NOT``, ``IS [NOT] NULL``:
  exact in every database;
* strings and booleans: ``=`` and ``IN`` only. A case-insensitive collation (MySQL's default) matches more
  rows than Spark's byte comparison, never fewer; ``<``/``>`` follow the database's collation order, and
  ``NOT`` of a case-insensitive match would drop rows Spark keeps, so neither is pushed;
* floating point and timestamps: ``IS [NOT] NULL`` only (a ``REAL`` against a double literal, or a
  timestamp in the server's time zone, may compare differently);
* ``LIKE`` forms and null-safe equality are not pushed.

Flink's JDBC source pushes filters the same way (``SupportsFilterPushDown``, connector 3.1+). The pushed
conditions travel to the executors as the table option :data:`PUSHED_FILTERS_OPTION` (JSON).
"""

from __future__ import annotations

import datetime
import decimal
import json
from typing import Any, Optional, Sequence

from pyspark.sql.datasource import (
    EqualTo,
    Filter,
    GreaterThan,
    GreaterThanOrEqual,
    In,
    IsNotNull,
    IsNull,
    LessThan,
    LessThanOrEqual,
    Not,
)
from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    StructType,
)

from kindling.options import TABLE_FACT_PREFIX

PUSHED_FILTERS_OPTION = f"{TABLE_FACT_PREFIX}jdbc.pushed-filters"

_COMPARISONS = {EqualTo: "=", LessThan: "<", LessThanOrEqual: "<=", GreaterThan: ">", GreaterThanOrEqual: ">="}
_ORDERED = (ByteType, ShortType, IntegerType, LongType, DecimalType, DateType)
_EQUALITY_ONLY = (StringType, BooleanType)

# A pushed condition: ["cmp", column, op, value] | ["in", column, [values]] | ["null", column, is_null] | ["not", condition]
Condition = list


def pushed_conditions(schema: StructType, filters: Sequence[Filter]) -> list[Condition]:
    """The conditions of ``filters`` (conjuncts) the database can apply as a prefilter (see the module doc)."""
    types = {f.name: f.dataType for f in schema.fields}
    conditions = []
    for spark_filter in filters:
        condition = _condition(spark_filter, types, negated=False)
        if condition is not None:
            conditions.append(condition)
    return conditions


def _column(spark_filter: Any, types: dict[str, DataType]) -> Optional[tuple[str, DataType]]:
    attribute = getattr(spark_filter, "attribute", ())
    if len(attribute) != 1 or attribute[0] not in types:
        return None  # a nested field, or a column the table does not have
    return attribute[0], types[attribute[0]]


def _condition(spark_filter: Filter, types: dict[str, DataType], negated: bool) -> Optional[Condition]:
    if isinstance(spark_filter, Not):
        inner = _condition(spark_filter.child, types, negated=True)
        return None if inner is None else ["not", inner]
    column = _column(spark_filter, types)
    if column is None:
        return None
    name, data_type = column
    if isinstance(spark_filter, (IsNull, IsNotNull)):
        return ["null", name, isinstance(spark_filter, IsNull)]
    ordered = isinstance(data_type, _ORDERED)
    equality = ordered or (isinstance(data_type, _EQUALITY_ONLY) and not negated)
    if type(spark_filter) in _COMPARISONS:
        op = _COMPARISONS[type(spark_filter)]
        if spark_filter.value is None or not (ordered or (equality and op == "=")):
            return None
        return ["cmp", name, op, _encode(spark_filter.value)]
    if isinstance(spark_filter, In) and equality:
        values = [_encode(v) for v in spark_filter.value if v is not None]
        return ["in", name, values] if values else None
    return None


def _encode(value: Any) -> Any:
    if isinstance(value, decimal.Decimal):
        return {"decimal": str(value)}
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return {"date": value.isoformat()}
    return value


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        if "decimal" in value:
            return decimal.Decimal(value["decimal"])
        return datetime.date.fromisoformat(value["date"])
    return value


def encode_conditions(conditions: list[Condition]) -> str:
    return json.dumps(conditions)


def where_clause(quote: Any, encoded: Optional[str]) -> tuple[list[str], list[Any]]:
    """The pushed conditions as SQL (``%s`` parameters, columns quoted by the dialect's ``quote``) and their values."""
    if not encoded:
        return [], []
    parts: list[str] = []
    params: list[Any] = []
    for condition in json.loads(encoded):
        parts.append(_sql(condition, quote, params))
    return parts, params


def _sql(condition: Condition, quote: Any, params: list[Any]) -> str:
    kind = condition[0]
    if kind == "not":
        return f"NOT ({_sql(condition[1], quote, params)})"
    column = quote(condition[1])
    if kind == "null":
        return f"{column} IS NULL" if condition[2] else f"{column} IS NOT NULL"
    if kind == "cmp":
        params.append(_decode(condition[3]))
        return f"{column} {condition[2]} %s"
    values = [_decode(v) for v in condition[2]]
    params.extend(values)
    return f"{column} IN ({', '.join(['%s'] * len(values))})"
