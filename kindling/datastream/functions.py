"""User function interfaces with PyFlink's names; plain Python callables work wherever these do."""

from __future__ import annotations

import sys
import sysconfig
from typing import Any, Callable, Generic, Iterable, TypeVar, Union

IN = TypeVar("IN")
OUT = TypeVar("OUT")
ACC = TypeVar("ACC")


class MapFunction(Generic[IN, OUT]):
    def map(self, value: IN) -> OUT:
        raise NotImplementedError


class FlatMapFunction(Generic[IN, OUT]):
    def flat_map(self, value: IN) -> Iterable[OUT]:
        raise NotImplementedError


class FilterFunction(Generic[IN]):
    def filter(self, value: IN) -> bool:
        raise NotImplementedError


class KeySelector(Generic[IN]):
    def get_key(self, value: IN) -> Any:
        raise NotImplementedError


class ReduceFunction(Generic[IN]):
    def reduce(self, value1: IN, value2: IN) -> IN:
        raise NotImplementedError


class AggregateFunction(Generic[IN, ACC, OUT]):
    """Incremental aggregation: an accumulator is created, records are added, a result is read."""

    def create_accumulator(self) -> ACC:
        raise NotImplementedError

    def add(self, value: IN, accumulator: ACC) -> ACC:
        raise NotImplementedError

    def get_result(self, accumulator: ACC) -> OUT:
        raise NotImplementedError

    def merge(self, acc_a: ACC, acc_b: ACC) -> ACC:
        raise NotImplementedError


class SourceFunction:
    """PyFlink's legacy source interface, for ``env.add_source(source_function)``.

    In PyFlink a SourceFunction wraps a Java one (a class name or a Java object). kindling runs no Java:
    the SourceFunctions it can add are those it implements itself, which turn into its connectors'
    sources (``FlinkKinesisConsumer`` into the Kinesis connector's). Any other is refused where it is
    added, naming it and the FLIP-27 sources to use with ``from_source`` instead.
    """

    def __init__(self, source_func: Any = None) -> None:
        self._source_func = source_func

    def as_sources(self, event_time: bool = False) -> list[Any]:
        """The kindling ``Source``s this function reads (one stream of records, unioned when several);
        ``event_time``: the stream is given a watermark strategy (``assign_timestamps_and_watermarks``)."""
        given = self._source_func
        name = given if isinstance(given, str) else type(given if given is not None else self).__name__
        raise TypeError(
            f"add_source: SourceFunction {name!r} cannot run in kindling: a PyFlink SourceFunction is a Java class, and "
            "kindling runs no Java (the SourceFunction it has is FlinkKinesisConsumer). Read with "
            "env.from_source(source, watermark_strategy, source_name) and a FLIP-27 source instead: "
            "KafkaSource.builder()...build(), FileSource..., NumberSequenceSource(start, end), or a connector's Source")


def ship_by_value(function: Any) -> None:
    """Make the module defining a user function travel with it to Python workers.

    cloudpickle sends functions and classes of importable modules by reference, but a user's
    own module (a job file, a test module) is usually not importable on the workers: send it
    by value instead. Installed packages keep travelling by reference.
    """
    from pyspark import cloudpickle

    owner = function if isinstance(function, type) else type(function)
    for candidate in (getattr(function, "__module__", None), getattr(owner, "__module__", None)):
        module = sys.modules.get(candidate or "")
        path = getattr(module, "__file__", None)
        if module is None or path is None or candidate == "__main__":
            continue
        if candidate.split(".")[0] in ("kindling", "pyspark") or any(
            marker in path for marker in ("site-packages", "dist-packages", sysconfig.get_paths()["stdlib"])
        ):
            continue
        try:
            cloudpickle.register_pickle_by_value(module)
        except ValueError:
            pass


def as_callable(function: Any, method: str) -> Callable[..., Any]:
    """A plain callable from either a function or an object implementing Flink's method name."""
    ship_by_value(function)
    if hasattr(function, method) and callable(getattr(function, method)):
        return getattr(function, method)
    if callable(function):
        return function
    raise TypeError(f"expected a function or an object with a '{method}' method, got {type(function).__name__}")


FunctionLike = Union[Callable[..., Any], MapFunction, FlatMapFunction, FilterFunction, KeySelector, ReduceFunction]


class CountAggregate(AggregateFunction):
    """Counts records (the keyed-state path's ``count()``)."""

    def create_accumulator(self) -> int:
        return 0

    def add(self, value: Any, accumulator: int) -> int:
        return accumulator + 1

    def get_result(self, accumulator: int) -> int:
        return accumulator

    def merge(self, acc_a: int, acc_b: int) -> int:
        return acc_a + acc_b
