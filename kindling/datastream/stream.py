"""DataStream, KeyedStream and WindowedStream: Flink's DataStream API over Spark DataFrames.

Each stream wraps a streaming DataFrame whose columns are the record's fields plus kindling's
internal columns (the record's event time). Column expressions stay in Spark's JVM; Python
functions run in ``mapInArrow`` over whole Arrow batches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Union

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructType

from kindling.connectors.base import INTERNAL_PREFIX, Sink
from kindling.datastream import records
from kindling.datastream.functions import AggregateFunction, as_callable, ship_by_value
from kindling.datastream.windows import WindowAssigner

if TYPE_CHECKING:
    from kindling.env import StreamEnvironment

ROWTIME = INTERNAL_PREFIX + "rowtime"
PROCTIME = INTERNAL_PREFIX + "proctime"
WINDOW = INTERNAL_PREFIX + "window"
KEY = "key"

ColumnLike = Union[str, Column]


def _is_column_like(value: Any) -> bool:
    return isinstance(value, (str, Column))


class DataStream:
    """A stream of records: a streaming DataFrame plus what kindling knows about its time."""

    def __init__(self, env: "StreamEnvironment", df: DataFrame, *, name: str, event_time: bool, bounded: bool) -> None:
        self._env = env
        self._df = df
        self._name = name
        self._event_time = event_time
        self._bounded = bounded

    # --- inspection -------------------------------------------------------------------------
    @property
    def schema(self) -> StructType:
        """The record's fields (kindling's internal columns hidden)."""
        return StructType([f for f in self._df.schema.fields if not f.name.startswith(INTERNAL_PREFIX)])

    @property
    def is_bounded(self) -> bool:
        return self._bounded

    def get_name(self) -> str:
        return self._name

    def name(self, name: str) -> "DataStream":
        """Name the last operation (shown in plans and progress)."""
        self._name = name
        return self

    def uid(self, uid: str) -> "DataStream":
        """Accepted for Flink compatibility; sinks use their own uid for checkpoint placement."""
        return self

    def set_parallelism(self, parallelism: int) -> "DataStream":
        """Accepted for Flink compatibility; Spark decides task parallelism per stage."""
        return self

    def to_dataframe(self) -> DataFrame:
        """The underlying Spark DataFrame with only the record's fields (an escape hatch to Spark)."""
        return self._df.select(*records.user_columns(self._df.schema))

    def _derive(self, df: DataFrame, name: str, **kwargs: Any) -> "DataStream":
        return DataStream(self._env, df, name=name, event_time=kwargs.get("event_time", self._event_time), bounded=self._bounded)

    def _internal(self) -> list[str]:
        return records.internal_columns(self._df.schema)

    # --- stateless transformations -----------------------------------------------------------
    def map(self, *functions: Any, output_type: Optional[records.TypeLike] = None) -> "DataStream":
        """One record out per record in.

        With Column expressions (``map(col("a") * 2, F.upper("b").alias("b"))``) the projection runs
        in Spark; with a Python function (or a MapFunction) it runs per record over Arrow batches
        and ``output_type`` gives the result's fields (default: the input's).
        """
        if functions and all(_is_column_like(f) for f in functions):
            return self._derive(self._df.select(*functions, *self._internal()), "Map")
        if len(functions) != 1:
            raise TypeError("map takes Column expressions, or exactly one Python function")
        function = as_callable(functions[0], "map")
        out = records.as_struct(output_type) if output_type is not None else self.schema
        full = StructType(list(out.fields) + [self._df.schema[c] for c in self._internal()])
        mapped = self._df.mapInArrow(records.map_batches(function, self._df.schema, full), full)
        return self._derive(mapped, "Map")

    def filter(self, predicate: Any) -> "DataStream":
        """Keep records matching a Column condition (in Spark) or a Python predicate (over Arrow)."""
        if _is_column_like(predicate):
            condition = F.expr(predicate) if isinstance(predicate, str) else predicate
            return self._derive(self._df.where(condition), "Filter")
        function = as_callable(predicate, "filter")
        filtered = self._df.mapInArrow(records.filter_batches(function, self._df.schema), self._df.schema)
        return self._derive(filtered, "Filter")

    def flat_map(self, function: Any, output_type: Optional[records.TypeLike] = None) -> "DataStream":
        """Zero or more records per record; a Column of type ARRAY explodes in Spark, a function yields in Python."""
        if isinstance(function, Column):
            exploded = self._df.select(F.explode(function).alias("f0"), *self._internal())
            if isinstance(exploded.schema["f0"].dataType, StructType):
                exploded = exploded.select("f0.*", *self._internal())
            return self._derive(exploded, "FlatMap")
        call = as_callable(function, "flat_map")
        out = records.as_struct(output_type) if output_type is not None else self.schema
        full = StructType(list(out.fields) + [self._df.schema[c] for c in self._internal()])
        return self._derive(self._df.mapInArrow(records.flat_map_batches(call, self._df.schema, full), full), "FlatMap")

    def union(self, *streams: "DataStream") -> "DataStream":
        """Records of several streams with the same fields, as one stream."""
        df = self._df
        for other in streams:
            if [f.name for f in other.schema.fields] != [f.name for f in self.schema.fields]:
                raise ValueError(f"union needs the same fields: {self.schema.simpleString()} vs {other.schema.simpleString()}")
            df = df.unionByName(other._df, allowMissingColumns=True)
        stream = self._derive(df, "Union")
        stream._bounded = self._bounded and all(s._bounded for s in streams)
        return stream

    def key_by(self, key_selector: Any, key_type: Any = None) -> "KeyedStream":
        """Partition by key: field name(s), a Column expression (becomes field ``key``) or a Python KeySelector."""
        if isinstance(key_selector, str):
            names = [key_selector]
        elif isinstance(key_selector, (list, tuple)) and all(isinstance(k, str) for k in key_selector):
            names = list(key_selector)
        else:
            names = []
        if names:
            missing = [n for n in names if n not in self.schema.fieldNames()]
            if missing:
                raise ValueError(f"key_by: no field {missing[0]!r}; the stream has {self.schema.fieldNames()}")
            return KeyedStream(self, names)
        if isinstance(key_selector, Column):
            return KeyedStream(self._derive(self._df.withColumn(KEY, key_selector), "KeyBy"), [KEY])
        function = as_callable(key_selector, "get_key")
        return_type = records.as_struct(key_type).fields[0].dataType if key_type is not None else StringType()
        fields = records.user_columns(self._df.schema)

        def select_key(row: Row) -> Any:
            return function(row)

        key_udf = F.udf(select_key, return_type, useArrow=True)
        keyed = self._df.withColumn(KEY, key_udf(F.struct(*fields)))
        return KeyedStream(self._derive(keyed, "KeyBy"), [KEY])

    # --- sinks -------------------------------------------------------------------------------
    def sink_to(self, sink: Sink) -> "DataStreamSink":
        """Write the stream into a sink (a connector's ``Sink``)."""
        if not isinstance(sink, Sink):
            raise TypeError(f"sink_to takes a kindling Sink (for example KafkaSink.builder()...build()), got {type(sink).__name__}")
        return self._env._add_sink(self, sink)

    add_sink = sink_to

    def print(self, sink_identifier: Optional[str] = None) -> "DataStreamSink":
        """Print every record as Flink does (``+I[...]``), optionally prefixed by an identifier."""
        options = {"print-identifier": sink_identifier} if sink_identifier else {}
        return self.sink_to(Sink("print", options))

    def execute_and_collect(self, job_name: Optional[str] = None, limit: Optional[int] = None, timeout: float = 600) -> list[Row]:
        """Run a bounded pipeline to its end and return its records (PyFlink's execute_and_collect)."""
        return self._env._collect(self, job_name=job_name, limit=limit, timeout=timeout)


class DataStreamSink:
    """The end of a pipeline: a stream bound to a sink, with Flink's ``name``/``uid``."""

    def __init__(self, stream: DataStream, sink: Sink, index: int) -> None:
        self.stream = stream
        self.sink = sink
        self._uid = f"sink-{index}-{sink.connector}"
        self._name = f"Sink: {sink.connector}"

    def name(self, name: str) -> "DataStreamSink":
        self._name = name
        return self

    def uid(self, uid: str) -> "DataStreamSink":
        """A stable id for this sink: it names the sink's checkpoint directory, so keep it across versions."""
        if not uid or "/" in uid:
            raise ValueError(f"sink uid must be a non-empty name without '/', got {uid!r}")
        self._uid = uid
        return self

    def set_parallelism(self, parallelism: int) -> "DataStreamSink":
        return self

    def get_uid(self) -> str:
        return self._uid

    def get_name(self) -> str:
        return self._name


class KeyedStream(DataStream):
    """A stream partitioned by key; windows and aggregations run per key."""

    def __init__(self, stream: DataStream, keys: Sequence[str]) -> None:
        super().__init__(stream._env, stream._df, name=stream._name, event_time=stream._event_time, bounded=stream._bounded)
        self.keys = list(keys)

    def window(self, assigner: WindowAssigner) -> "WindowedStream":
        """Group each key's records into windows (tumbling, sliding or session; event or processing time)."""
        return WindowedStream(self, assigner)


class WindowedStream:
    """A keyed stream cut into windows; an aggregation turns it back into a stream of window results.

    Results carry the key fields, the aggregate, and ``window_start``/``window_end`` (a convenience
    over Flink, where those need a ProcessWindowFunction). A result's event time is the window's
    last millisecond, as in Flink, so windows can be chained. Results are emitted once, when the
    watermark passes the window's end (Spark's append mode).
    """

    def __init__(self, keyed: KeyedStream, assigner: WindowAssigner) -> None:
        if not isinstance(assigner, WindowAssigner):
            raise TypeError(f"window() takes a window assigner such as TumblingEventTimeWindows.of('15 s'), got {type(assigner).__name__}")
        if assigner.is_event_time and not keyed._event_time:
            raise ValueError(
                f"{type(assigner).__name__} needs event time, but this stream has no watermark strategy: pass "
                "WatermarkStrategy.for_bounded_out_of_orderness(...).with_timestamp_assigner(...) to from_source, "
                f"or use the processing-time twin ({type(assigner).__name__.replace('EventTime', 'ProcessingTime')})"
            )
        self._keyed = keyed
        self._assigner = assigner

    def _grouped(self) -> tuple[DataFrame, Column]:
        df = self._keyed._df
        if self._assigner.is_event_time:
            time_column = F.col(ROWTIME)
        else:
            df = df.withColumn(PROCTIME, F.current_timestamp()).withWatermark(PROCTIME, "0 seconds")
            time_column = F.col(PROCTIME)
        return df, self._assigner.to_column(time_column).alias(WINDOW)

    def _finish(self, aggregated: DataFrame, result_columns: Sequence[Column], name: str) -> DataStream:
        window = F.col(WINDOW)
        out = aggregated.select(
            *result_columns,
            window.start.alias("window_start"),
            window.end.alias("window_end"),
            F.window_time(window).alias(ROWTIME),
        )
        return DataStream(self._keyed._env, out, name=name, event_time=self._assigner.is_event_time, bounded=self._keyed._bounded)

    def aggregate(self, *aggregations: Any, output_type: Optional[records.TypeLike] = None) -> DataStream:
        """Aggregate each window: built-in Spark aggregate Columns (fast, in the JVM) or a Flink AggregateFunction.

        ``aggregate(F.count("*").alias("n"), F.avg("x").alias("avg_x"))`` runs as a Spark aggregation.
        ``aggregate(MyAggregateFunction(), output_type="total BIGINT")`` runs the function in Python
        over each window's records when the window fires.
        """
        if aggregations and all(isinstance(a, Column) for a in aggregations):
            df, window = self._grouped()
            keys = [F.col(k) for k in self._keyed.keys]
            aggregated = df.groupBy(*keys, window).agg(*aggregations)
            agg_names = [c for c in aggregated.columns if c not in self._keyed.keys and c != WINDOW]
            return self._finish(aggregated, [*keys, *[F.col(c) for c in agg_names]], "WindowAggregate")
        if len(aggregations) != 1 or not isinstance(aggregations[0], AggregateFunction):
            raise TypeError("aggregate takes Spark aggregate Columns, or one AggregateFunction with an output_type")
        if output_type is None:
            raise ValueError("aggregate(AggregateFunction) needs output_type, e.g. output_type='total BIGINT'")
        function: AggregateFunction = aggregations[0]
        ship_by_value(function)
        out = records.as_struct(output_type, single_name="result")

        def fold(values: list[Row]) -> tuple:
            accumulator = function.create_accumulator()
            for value in values:
                accumulator = function.add(value, accumulator)
            return records.normalise(function.get_result(accumulator), out)

        return self._fold_in_python(fold, out, keep_keys=True, name="WindowAggregate")

    def _fold_in_python(self, fold: Callable[[list[Row]], tuple], out: StructType, keep_keys: bool, name: str) -> DataStream:
        """Collect each window's records and fold them with a Python function when the window fires."""
        df, window = self._grouped()
        keys = [F.col(k) for k in self._keyed.keys] if keep_keys else []
        fields = self._keyed.schema.fieldNames()
        collected = df.groupBy(*[F.col(k) for k in self._keyed.keys], window).agg(
            F.collect_list(F.struct(*fields)).alias("__kindling_values")
        )
        fold_udf = F.udf(fold, out, useArrow=True)
        result = collected.select(*keys, F.col(WINDOW), fold_udf(F.col("__kindling_values")).alias("__kindling_result"))
        return self._finish(result, [*keys, *[F.col("__kindling_result." + f).alias(f) for f in out.fieldNames()]], name)

    def count(self) -> DataStream:
        """Records per key and window, as field ``count`` (BIGINT)."""
        return self.aggregate(F.count(F.lit(1)).alias("count"))

    def _field_aggregate(self, field: Union[str, int], function: Callable[[Column], Column], name: str) -> DataStream:
        fields = self._keyed.schema.fieldNames()
        if isinstance(field, int):
            if not 0 <= field < len(fields):
                raise ValueError(f"{name}: field position {field} is out of range for fields {fields}")
            field = fields[field]
        if field not in fields:
            raise ValueError(f"{name}: no field {field!r}; the stream has {fields}")
        others = [f for f in fields if f != field and f not in self._keyed.keys]
        # As in Flink, the result is a record of the input's type: the field aggregated, the key
        # fields from the key, and the other fields from one record of the window.
        aggregations = [function(F.col(field)).alias(field)] + [F.first(F.col(f)).alias(f) for f in others]
        df, window = self._grouped()
        aggregated = df.groupBy(*[F.col(k) for k in self._keyed.keys], window).agg(*aggregations)
        return self._finish(aggregated, [F.col(f) for f in fields if f in aggregated.columns], name)

    def sum(self, field: Union[str, int]) -> DataStream:
        """Sum of a field per key and window."""
        return self._field_aggregate(field, F.sum, "sum")

    def min(self, field: Union[str, int]) -> DataStream:
        """Minimum of a field per key and window."""
        return self._field_aggregate(field, F.min, "min")

    def max(self, field: Union[str, int]) -> DataStream:
        """Maximum of a field per key and window."""
        return self._field_aggregate(field, F.max, "max")

    def reduce(self, function: Any) -> DataStream:
        """Combine each window's records pairwise with a Python ReduceFunction; the result has the input's fields."""
        reduce = as_callable(function, "reduce")
        schema = self._keyed.schema
        fields = schema.fieldNames()

        def fold(values: list[Row]) -> tuple:
            result: Any = values[0]
            for value in values[1:]:
                result = reduce(result, value)
                if isinstance(result, dict):
                    result = Row(**{n: result.get(n) for n in fields})
            return records.normalise(result, schema)

        return self._fold_in_python(fold, schema, keep_keys=False, name="WindowReduce")
