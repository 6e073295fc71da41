"""Flink's aggregate functions as accumulators that add and retract values, with Flink's result types.

The retracting GROUP BY (:mod:`kindling.sql.group_aggregate`) and the OVER aggregation
(:mod:`kindling.sql.over_aggregate`) keep one accumulator per aggregate call: a value is added with sign 1 and
retracted with sign -1 (a retraction from the changelog, or a row leaving an OVER frame). MIN, MAX and DISTINCT
keep value counts so that a retraction can remove a value; COUNT is a number, SUM and AVG a total and a count.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_DOWN, Decimal
from typing import Any, Callable, Optional

from pyspark.sql.types import ByteType, DataType, DecimalType, DoubleType, FloatType, IntegerType, LongType, ShortType

from kindling.sql.errors import SqlError


@dataclass
class AggregateCall:
    """One aggregate call of the query: its function, DISTINCT, and argument text (None for COUNT(*))."""

    function: str
    distinct: bool
    argument: Optional[str]
    offset: int = 1  # LAG: how many rows back
    default: Optional[str] = None  # LAG: the value when there is no such row (SQL text)
    user: Any = None  # a Python aggregate function (udaf): its accumulator instead of a built-in one
    width: int = 1  # a Python aggregate function's argument count (more than one: a struct of them)

    def arguments(self, value: Any) -> tuple:
        """A Python aggregate function's arguments from the call's argument column."""
        if self.width == 1:
            return (value,)
        return tuple(value.values()) if isinstance(value, dict) else tuple(value)


_INTEGERS = (ByteType, ShortType, IntegerType, LongType)


def result_type(call: AggregateCall, argument: DataType) -> DataType:
    """Flink's result type of ``call`` over an argument of type ``argument``."""
    if call.user is not None:
        return call.user.spark_type
    if call.function == "COUNT":
        return LongType()
    if call.function in ("MIN", "MAX", "FIRST_VALUE", "LAST_VALUE"):
        return argument
    if isinstance(argument, DecimalType):
        return DecimalType(38, max(6, argument.scale) if call.function == "AVG" else argument.scale)
    if isinstance(argument, _INTEGERS + (FloatType, DoubleType)):
        return argument  # SUM and AVG keep the input type (AVG over integers truncates)
    raise SqlError(f"{call.function} over a {argument.simpleString().upper()} argument is not supported", construct=call.function,
                   hint="a numeric argument: TINYINT..BIGINT, FLOAT, DOUBLE or DECIMAL")


def finisher(call: AggregateCall, output: DataType, argument: Optional[DataType] = None) -> Callable[[Any], Any]:
    """The function from an accumulator to the call's result (``argument``: the argument column's type)."""
    if call.user is not None:
        user = call.user
        types = [argument] if call.width == 1 else [f.dataType for f in argument.fields]  # type: ignore[union-attr]
        return lambda acc: user.value(acc, types)
    integral = isinstance(output, _INTEGERS)
    scale = output.scale if isinstance(output, DecimalType) else None

    def average(total: Any, count: int) -> Any:
        if count == 0:
            return None
        if integral:
            quotient = abs(total) // count  # Java's integer division truncates toward zero
            return quotient if total >= 0 else -quotient
        if scale is not None:
            return (Decimal(total) / count).quantize(Decimal(1).scaleb(-scale), rounding=ROUND_DOWN)
        return total / count

    if call.distinct and call.function in ("COUNT", "SUM", "AVG"):
        if call.function == "COUNT":
            return lambda values: len(values)
        if call.function == "SUM":
            return lambda values: sum(values) if values else None
        return lambda values: average(sum(values), len(values)) if values else None
    if call.function == "COUNT":
        return lambda n: n
    if call.function == "FIRST_VALUE":
        return lambda values: values[0] if values else None
    if call.function == "LAST_VALUE":
        return lambda values: values[-1] if values else None
    if call.function == "SUM":
        return lambda acc: acc[0] if acc[1] else None
    if call.function == "AVG":
        return lambda acc: average(acc[0], acc[1])
    if call.function == "MIN":
        return lambda values: min(values) if values else None
    return lambda values: max(values) if values else None


def empty(call: AggregateCall) -> Any:
    if call.user is not None:
        return call.user.create()
    if call.function in ("FIRST_VALUE", "LAST_VALUE"):
        return []  # the non-null values in arrival order
    if call.distinct or call.function in ("MIN", "MAX"):
        return {}
    if call.function == "COUNT":
        return 0
    return [0, 0]


def compact(call: AggregateCall, acc: Any) -> Any:
    """An accumulator no value will be retracted from (an unbounded frame), reduced to what its result needs."""
    if call.function == "FIRST_VALUE":
        return acc[:1]
    if call.function == "LAST_VALUE":
        return acc[-1:]
    return acc


def update(call: AggregateCall, acc: Any, value: Any, sign: int) -> Any:
    """Accumulate (sign 1) or retract (sign -1) ``value``; nulls are ignored as by every SQL aggregate (a Python
    aggregate function is given them, as Flink gives them)."""
    if call.user is not None:
        return call.user.add(acc, call.arguments(value), sign)
    if value is None:
        return acc
    if call.function in ("FIRST_VALUE", "LAST_VALUE"):  # rows leave a frame in the order they entered it
        if sign > 0:
            acc.append(value)
        elif value in acc:
            acc.remove(value)
        return acc
    if isinstance(acc, dict):  # value counts: MIN, MAX and DISTINCT
        count = acc.get(value, 0) + sign
        if count:
            acc[value] = count
        else:
            del acc[value]
        return acc
    if isinstance(acc, int):
        return acc + sign
    acc[0] += value * sign
    acc[1] += sign
    return acc
