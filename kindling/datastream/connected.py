"""Two streams connected: CoMapFunction/CoFlatMapFunction per record, KeyedCoProcessFunction with shared keyed state.

Records of both inputs travel in one Spark stream, tagged with their input; keyed connected
streams run in the keyed operator, so both inputs of a key see the same state and timers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterator, List, Optional

import pyarrow as pa
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from kindling.datastream import records
from kindling.datastream.context import RuntimeContext
from kindling.datastream.errors import RecordCalls
from kindling.datastream.functions import ship_by_value
from kindling.datastream.process import BaseContext, RichFunction, invoker

if TYPE_CHECKING:
    from kindling.datastream.stream import DataStream, SingleOutputStreamOperator


class CoMapFunction(RichFunction):
    def map1(self, value: Any) -> Any:
        raise NotImplementedError

    def map2(self, value: Any) -> Any:
        raise NotImplementedError


class CoFlatMapFunction(RichFunction):
    def flat_map1(self, value: Any) -> Any:
        raise NotImplementedError

    def flat_map2(self, value: Any) -> Any:
        raise NotImplementedError


class KeyedCoProcessFunction(RichFunction):
    """Flink's KeyedCoProcessFunction: two inputs, one keyed state and timer service per key."""

    Context = BaseContext
    OnTimerContext = BaseContext

    def process_element1(self, value: Any, ctx: BaseContext) -> Any:
        raise NotImplementedError

    def process_element2(self, value: Any, ctx: BaseContext) -> Any:
        raise NotImplementedError

    def on_timer(self, timestamp: int, ctx: BaseContext) -> Any:
        return None


CoProcessFunction = KeyedCoProcessFunction


class _CoAdapter:
    """Runs a co-function (keyed co-process, co-map, co-flat-map) in the keyed operator."""

    def __init__(self, function: Any) -> None:
        self._function = function

    def open(self, runner: Any, runtime_context: RuntimeContext) -> None:
        function = self._function
        function._runtime_context = runtime_context
        function.open(runtime_context)
        self._ctx = BaseContext(runner)
        if isinstance(function, KeyedCoProcessFunction):
            one, two = invoker(function.process_element1, 2), invoker(function.process_element2, 2)
            self._calls = [lambda v: one(v, self._ctx), lambda v: two(v, self._ctx)]
            self._timer = invoker(function.on_timer, 2)
        else:
            self._calls = _co_calls(function)
            self._timer = None

    def element(self, index: int, value: Any) -> List[Any]:
        return self._calls[index](value)

    def timer(self, timestamp: int) -> List[Any]:
        return self._timer(timestamp, self._ctx) if self._timer is not None else []

    def close(self) -> None:
        self._function.close()


def _co_calls(function: Any) -> List[Callable[[Any], List[Any]]]:
    if isinstance(function, CoMapFunction):
        return [lambda v: [function.map1(v)], lambda v: [function.map2(v)]]
    if isinstance(function, CoFlatMapFunction):
        first, second = invoker(function.flat_map1, 1), invoker(function.flat_map2, 1)
        return [first, second]
    raise TypeError(f"expected a CoMapFunction, CoFlatMapFunction or KeyedCoProcessFunction, got {type(function).__name__}")


class ConnectedStreams:
    """Two streams whose records one function handles, keeping their types apart (Flink's ConnectedStreams)."""

    def __init__(self, first: "DataStream", second: "DataStream") -> None:
        self.first = first
        self.second = second

    def key_by(self, key_selector1: Any, key_selector2: Any) -> "ConnectedStreams":
        """Key both inputs (field names or selectors); records with equal keys meet in the same state."""
        return ConnectedStreams(self.first.key_by(key_selector1), self.second.key_by(key_selector2))

    def _keyed(self) -> bool:
        from kindling.datastream.stream import KeyedStream

        return isinstance(self.first, KeyedStream) and isinstance(self.second, KeyedStream)

    def process(self, function: Any, output_type: Optional[records.TypeLike] = None) -> "SingleOutputStreamOperator":
        """Run a KeyedCoProcessFunction over keyed connected streams."""
        if not self._keyed():
            raise ValueError("process(KeyedCoProcessFunction) needs keyed inputs: connect(...).key_by(key1, key2) or connect two KeyedStreams")
        if not isinstance(function, KeyedCoProcessFunction):
            raise TypeError(f"ConnectedStreams.process takes a KeyedCoProcessFunction, got {type(function).__name__}")
        return self._run(function, output_type, "CoProcess")

    def _run(self, function: Any, output_type: Optional[records.TypeLike], name: str) -> "SingleOutputStreamOperator":
        first, second = self.first, self.second  # KeyedStreams
        if len(first.keys) != len(second.keys):  # type: ignore[attr-defined]
            raise ValueError(f"connected keys differ in arity: {first.keys} vs {second.keys}")  # type: ignore[attr-defined]
        out_user, out_type = self._output(output_type)
        inputs = [
            (first._df, list(first.keys), first.schema),  # type: ignore[attr-defined]
            (second._df, list(second.keys), second.schema),  # type: ignore[attr-defined]
        ]
        ship_by_value(function)
        return first._keyed_operation(_CoAdapter(function), name, out_user, inputs, len(first.keys),  # type: ignore[attr-defined]
                                      bounded=first.is_bounded and second.is_bounded, upstream=[second], out_type=out_type,
                                      input_type_infos=[first._type_info, second._type_info])

    def _output(self, output_type: Optional[records.TypeLike]) -> tuple[StructType, Any]:
        """The function's output columns and type information: as ``DataStream.map``'s, over either input's type.

        As in PyFlink, without ``output_type`` a function over a PyFlink-typed input produces untyped
        (pickled) records; over two of kindling's own row streams it keeps the first input's fields.
        """
        if output_type is None and self.first._type_info is None and self.second._type_info is not None:
            return self.second._output(None)
        return self.first._output(output_type)

    def map(self, function: Any, output_type: Optional[records.TypeLike] = None) -> "DataStream":
        """One record out per record of either input (map1 for the first, map2 for the second)."""
        return self._stateless(function, output_type, "CoMap")

    def flat_map(self, function: Any, output_type: Optional[records.TypeLike] = None) -> "DataStream":
        """Zero or more records per record of either input (flat_map1 / flat_map2)."""
        return self._stateless(function, output_type, "CoFlatMap")

    def _stateless(self, function: Any, output_type: Optional[records.TypeLike], name: str) -> "DataStream":
        if self._keyed():
            return self._run(function, output_type, name)
        from kindling.arrow import arrow_schema
        from kindling.datastream.operator import INPUT, value_column
        from kindling.datastream.stream import ROWTIME, DataStream

        ship_by_value(function)
        _co_calls(function)  # fail early on the wrong function type
        out_user, out_type = self._output(output_type)
        types = [self.first.schema, self.second.schema]
        frames = []
        for index, stream in enumerate((self.first, self.second)):
            columns = [F.lit(index).alias(INPUT)]
            for j, schema in enumerate(types):
                if j == index:
                    columns.append(F.struct(*[F.col(f) for f in schema.fieldNames()]).alias(value_column(j)))
                else:
                    columns.append(F.lit(None).cast(schema).alias(value_column(j)))
            columns.append(F.col(ROWTIME))
            frames.append(stream._df.select(*columns))
        union = frames[0].unionByName(frames[1])
        full = StructType(list(out_user.fields) + [union.schema[ROWTIME]])
        decoders = [records.Codec(t, s._type_info) for t, s in zip(types, (self.first, self.second))]
        run = _co_batches(function, types, decoders, records.Codec(out_user, out_type), arrow_schema(full))
        out = union.mapInArrow(run, full)
        stream = DataStream(self.first._env, out, name=name, event_time=self.first._event_time,
                            bounded=self.first.is_bounded and self.second.is_bounded,
                            watermarked=self.first._watermarked and self.second._watermarked, type_info=out_type)
        stream._hides_watermark = self.first._hides_watermark or self.second._hides_watermark
        return stream


def _co_batches(
    function: Any, types: List[StructType], decoders: List[records.Codec], encoder: records.Codec, out_arrow: pa.Schema
) -> Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]:
    from kindling.datastream.operator import INPUT, value_column

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        function._runtime_context = RuntimeContext("CoFunction", None, 0, 1)
        function.open(function._runtime_context)
        calls = _co_calls(function)
        # what a failure names: the input's method of the function, and the operator
        methods = [function.map1, function.map2] if isinstance(function, CoMapFunction) else [function.flat_map1, function.flat_map2]
        operator = "CoMap" if isinstance(function, CoMapFunction) else "CoFlatMap"
        for batch in batches:
            inputs = batch.column(INPUT).to_pylist()
            # Each input's fields as columns (a struct read row by row would be a dict per row), then a row's values.
            values = [list(zip(*[c.to_pylist() for c in batch.column(value_column(i)).flatten()])) or [()] * len(inputs)
                      for i in range(2)]
            times = batch.column(batch.num_columns - 1).to_pylist()
            out: list = []
            with RecordCalls(function, operator) as failing:
                for n, index in enumerate(inputs):
                    value = decoders[index].decode(list(values[index][n]))
                    failing.function, failing.record = methods[index], value
                    for result in calls[index](value):
                        out.append(encoder.encode(result, "CoFunction result") + (times[n],))
            columns = list(zip(*out)) if out else [() for _ in out_arrow]
            arrays = [pa.array(list(c), type=f.type) for c, f in zip(columns, out_arrow)]
            yield pa.RecordBatch.from_arrays(arrays, schema=out_arrow)
        function.close()

    return run
