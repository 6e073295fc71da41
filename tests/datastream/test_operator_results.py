"""The keyed operator's result columns reach Spark as Spark's own conversion of the function's values would make them."""
import decimal
import math

import pandas as pd
import pyarrow as pa
import pytest
from pyspark.sql.conversion import PandasToArrowConversion
from pyspark.sql.types import StringType, StructField, StructType

from kindling.datastream import operator as op

# The operator's result dtypes and the Spark types they stand for (a STRING column is "string").
_TYPES = {**{dtype: spark_type() for spark_type, dtype in op._NUMPY_TYPES.items()}, "string": StringType()}


def _spark(column, dtype: str) -> pa.Array:
    """A result column as Spark's conversion turns it into Arrow for the operator's output type."""
    schema = StructType([StructField("c", _TYPES[dtype])])
    batch = PandasToArrowConversion.convert(pd.DataFrame({"c": column}), schema, timezone="UTC", safecheck=True,
                                            arrow_cast=True, assign_cols_by_name=True, int_to_decimal_coercion_enabled=False)
    return batch.column(0)


@pytest.mark.parametrize("dtype, values", [
    ("int64", [1, None, 2**63 - 1, -(2**63)]),
    ("int32", [7, -7, None, 2**31 - 1]),
    ("int16", [1, None]),
    ("int8", [-128, 127]),
    ("float64", [0.5, None, float("nan"), -0.0, 1e308, math.inf]),
    ("float32", [0.1, None, float("nan")]),
    ("bool", [True, None, False]),
    ("string", ["a", None, "", "ünï"]),
    ("int32", [None, None]),
])
def test_a_column_of_its_own_kind_travels_as_arrow_with_the_values_spark_would_give(dtype, values):
    column = op._result_column(values, dtype)
    assert isinstance(column, pa.Array)
    converted = _spark(pd.arrays.ArrowExtensionArray(column), dtype)
    checked = _spark(_as_checked(values, dtype), dtype)  # the path Spark checks value by value
    assert converted.type == checked.type
    assert repr(converted.to_pylist()) == repr(checked.to_pylist())
    if dtype != "float32":  # (a float32 column holds its values rounded to float32 either way)
        assert repr(converted.to_pylist()) == repr(values)


def _as_checked(values, dtype):
    """The column as the operator handed it to Spark before Arrow-backed results: numpy where exact, Arrow-backed
    floats where a NaN must stay one, Python objects otherwise."""
    exact = op._numbers(values, dtype) if dtype != "string" else None
    if exact is None and dtype.startswith("float"):
        exact = op._floats_with_nulls(values, dtype)
    return pd.Series(exact) if exact is not None else pd.Series(values, dtype=object)


@pytest.mark.parametrize("dtype, values", [
    ("int32", [1, True]),  # a bool is no integer result: Spark's conversion decides
    ("float64", [1, 0.5]),  # nor an int a float
    ("int64", [decimal.Decimal(1)]),
    ("string", ["a", b"b"]),
    ("int32", [2**40]),  # out of range: Spark's conversion names it
    ("string", ["\ud800"]),  # a lone surrogate, which no UTF-8 holds
])
def test_a_column_with_another_kind_of_value_is_left_to_spark(dtype, values):
    assert isinstance(op._result_column(values, dtype), pd.Series)


def test_a_map_column_goes_as_dicts():
    column = op._result_column([[("a", 1)], None, {"b": 2}], "map")
    assert column.tolist() == [{"a": 1}, None, {"b": 2}]
