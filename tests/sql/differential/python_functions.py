"""The Python aggregate functions the corpus's ``udaf-*`` entries call, registered the same way on PyFlink and kindling.

The recorder runs in PyFlink's venv (``pyflink`` is PyFlink); the suite runs in kindling's, where
``kindling.pyflink_compat`` makes ``pyflink`` kindling's view of it: the same source on both sides.
"""

from __future__ import annotations

import importlib.util
from typing import Any

if importlib.util.find_spec("pyflink") is None:
    import kindling.pyflink_compat  # noqa: F401

from pyflink.table import AggregateFunction, DataTypes  # noqa: E402
from pyflink.table.udf import udaf  # noqa: E402


class WeightedAvg(AggregateFunction):
    """PyFlink's documentation example: sum(value * weight) // sum(weight), rows with a null value skipped."""

    def create_accumulator(self) -> Any:
        return [0, 0]

    def get_value(self, accumulator: Any) -> Any:
        return None if accumulator[1] == 0 else accumulator[0] // accumulator[1]

    def accumulate(self, accumulator: Any, value: Any, weight: Any) -> None:
        if value is not None and weight is not None:
            accumulator[0] += value * weight
            accumulator[1] += weight

    def retract(self, accumulator: Any, value: Any, weight: Any) -> None:
        if value is not None and weight is not None:
            accumulator[0] -= value * weight
            accumulator[1] -= weight

    def get_result_type(self) -> Any:
        return DataTypes.BIGINT()

    def get_accumulator_type(self) -> Any:
        return DataTypes.ARRAY(DataTypes.BIGINT())


class Longest(AggregateFunction):
    """The longest string (the first of equal length in sorted order), nulls counted as missing; retractable."""

    def create_accumulator(self) -> Any:
        return []

    def get_value(self, accumulator: Any) -> Any:
        return min(accumulator, key=lambda s: (-len(s), s)) if accumulator else None

    def accumulate(self, accumulator: Any, value: Any) -> None:
        if value is not None:
            accumulator.append(value)

    def retract(self, accumulator: Any, value: Any) -> None:
        if value is not None and value in accumulator:
            accumulator.remove(value)

    def get_result_type(self) -> Any:
        return DataTypes.STRING()

    def get_accumulator_type(self) -> Any:
        return DataTypes.ARRAY(DataTypes.STRING())


def mean(v: Any) -> Any:
    return v.mean()


def weighted_mean(v: Any, w: Any) -> Any:
    return (v * w).sum() / w.sum()


FUNCTIONS = {
    "weighted_avg": lambda: udaf(WeightedAvg()),
    "longest": lambda: udaf(Longest()),
    "mean_udaf": lambda: udaf(mean, result_type=DataTypes.DOUBLE(), func_type="pandas"),
    "weighted_mean": lambda: udaf(weighted_mean, result_type=DataTypes.DOUBLE(), func_type="pandas"),
}


def register(register_function: Any) -> None:
    """Register every function with ``register_function(name, function)`` (PyFlink's
    ``create_temporary_system_function``, kindling's ``create_temporary_function``)."""
    for name, make in FUNCTIONS.items():
        register_function(name, make())
