"""DataStream, KeyedStream and WindowedStream: Flink's DataStream API over Spark DataFrames.

Each stream wraps a streaming DataFrame whose columns are the record's fields plus kindling's
internal columns (the record's event time). Column expressions stay in Spark's JVM; Python
functions run in ``mapInArrow`` over whole Arrow batches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Union

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F
from pyspark.sql.types import BinaryType, StringType, StructField, StructType

from kindling import config as cfg
from kindling.common.closeable_iterator import CollectedRows
from kindling.connectors.base import INTERNAL_PREFIX, Sink
from kindling.datastream import records
from kindling.datastream.functions import AggregateFunction, as_callable, ship_by_value
from kindling.datastream.windows import WindowAssigner
from kindling.runtime.hash_partitioning import spark_partition

if TYPE_CHECKING:
    from kindling.env import StreamEnvironment

ROWTIME = INTERNAL_PREFIX + "rowtime"
PROCTIME = INTERNAL_PREFIX + "proctime"
WINDOW = INTERNAL_PREFIX + "window"
KEY = "key"
# A Python key selector's key, pickled: records keep their fields, and the key reaches
# get_current_key() as the selector returned it (an int stays an int).
SELECTOR_KEY = INTERNAL_PREFIX + "key"
FROM_TIMER = INTERNAL_PREFIX + "from_timer"  # see operator.FROM_TIMER

ColumnLike = Union[str, Column]


def _is_column_like(value: Any) -> bool:
    return isinstance(value, (str, Column))


class DataStream:
    """A stream of records: a streaming DataFrame plus what kindling knows about its time."""

    def __init__(self, env: "StreamEnvironment", df: DataFrame, *, name: str, event_time: bool, bounded: bool,
                 watermarked: Optional[bool] = None, type_info: Any = None) -> None:
        self._env = env
        # PyFlink type information of the records (Types.ROW_NAMED(...), Types.PICKLED_BYTE_ARRAY(), ...), or
        # None for kindling's own streams whose functions see pyspark Rows of the schema's fields.
        self._type_info = type_info
        # Set on a source's stream: plans the source again with another watermark strategy.
        self._replan: Optional[Callable[[Any], "DataStream"]] = None
        self._df = df
        self._name = name
        self._event_time = event_time
        self._bounded = bounded
        # Whether ROWTIME is Spark's event-time column (a source's watermark applies to it); after a
        # keyed operator it is a plain column and windows take the keyed-state path.
        self._watermarked = event_time if watermarked is None else watermarked
        # The keyed operator in this stream's plan that runs in Spark's processing-time mode over event
        # time (it registers processing-time timers), so no watermark passes it (see _check_watermark_reaches).
        self._hides_watermark: Optional[str] = None
        # The operator whose tagged output this stream branches off (its main output, a side output, or a
        # stateless transformation of those), and how to build this stream from it: sinks of one
        # operator's branches share one query (see operator_sinks).
        self._origin: Optional["SingleOutputStreamOperator"] = None
        self._branch: Optional[Callable[[DataFrame], DataFrame]] = None

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

    # --- physical partitioning and operator hints -----------------------------------------------
    # Flink routes records between parallel operator instances by these; Spark distributes them by its own stages
    # (a keyed operation regroups them by key), so they change no result. The stream they return is not keyed.
    def _repartitioned(self, name: str) -> "DataStream":
        return self._derive(self._df, name, build=lambda df: df)

    def rebalance(self) -> "DataStream":
        """Flink's round-robin redistribution: the same records (Spark spreads a stage's tasks by itself)."""
        return self._repartitioned("Rebalance")

    def shuffle(self) -> "DataStream":
        return self._repartitioned("Shuffle")

    def rescale(self) -> "DataStream":
        return self._repartitioned("Rescale")

    def forward(self) -> "DataStream":
        return self._repartitioned("Forward")

    def partition_custom(self, partitioner: Any, key_selector: Any) -> "DataStream":
        """Not supported: a custom partitioner picks the parallel instance (``get_index_of_this_subtask``) that each
        record reaches, which Spark's tasks do not follow."""
        raise NotImplementedError("partition_custom is a PyFlink API that kindling does not support: Spark does not route "
                                  "records to a chosen task; use key_by(key_selector) to process records by key")

    def disable_chaining(self) -> "DataStream":
        """Accepted (an operator hint): Spark fuses stages by its own rules."""
        return self

    def start_new_chain(self) -> "DataStream":
        return self

    def slot_sharing_group(self, slot_sharing_group: Any) -> "DataStream":
        """Accepted: Spark schedules tasks on its executors' cores, not in Flink's slots."""
        return self

    def set_buffer_timeout(self, timeout_millis: int) -> "DataStream":
        return self

    def set_max_parallelism(self, max_parallelism: int) -> "DataStream":
        """Accepted: keyed state is grouped by the job's ``pipeline.max-parallelism`` (env.set_max_parallelism)."""
        return self

    def set_uid_hash(self, uid_hash: str) -> "DataStream":
        return self

    def set_description(self, description: str) -> "DataStream":
        return self

    def force_non_parallel(self) -> "DataStream":
        return self

    def get_execution_environment(self) -> "StreamEnvironment":
        return self._env

    def get_execution_config(self) -> Any:
        return self._env.get_config()

    def project(self, *field_indexes: int) -> "DataStream":
        """The fields at ``field_indexes`` of a Tuple stream, as a Tuple stream (in Spark: a projection)."""
        from kindling.common.typeinfo import TupleTypeInfo, Types

        info = self._type_info
        if not isinstance(info, TupleTypeInfo):
            raise TypeError("Only Tuple DataStreams can be projected.")
        count = len(info.field_types)
        for index in field_indexes:
            if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
                raise IndexError(f"project: field index {index!r} is not one of the tuple's fields 0..{count - 1}")
        names = info.field_names
        internal = self._internal()
        columns = [F.col(f"`{names[i]}`").alias(f"f{j}") for j, i in enumerate(field_indexes)]
        projected = self._transform(lambda df: df.select(*columns, *internal), "Projection")
        projected._type_info = Types.TUPLE([info.field_types[i] for i in field_indexes])
        return projected

    def to_dataframe(self) -> DataFrame:
        """The underlying Spark DataFrame with only the record's fields (an escape hatch to Spark)."""
        return self._df.select(*records.user_columns(self._df.schema))

    def _derive(self, df: DataFrame, name: str, build: Optional[Callable[[DataFrame], DataFrame]] = None,
                **kwargs: Any) -> "DataStream":
        """A stream computed from this one; ``build`` (this stream's DataFrame -> ``df``) keeps it a branch of its operator."""
        derived = DataStream(self._env, df, name=name, event_time=kwargs.get("event_time", self._event_time), bounded=self._bounded,
                             watermarked=self._watermarked, type_info=kwargs.get("type_info", self._type_info))
        derived._hides_watermark = self._hides_watermark
        if build is not None and self._branch is not None:
            branch = self._branch
            derived._origin, derived._branch = self._origin, (lambda tagged: build(branch(tagged)))
        return derived

    def _transform(self, build: Callable[[DataFrame], DataFrame], name: str) -> "DataStream":
        return self._derive(build(self._df), name, build=build)

    def _internal(self) -> list[str]:
        return records.internal_columns(self._df.schema)

    def get_type(self) -> Any:
        """The records' PyFlink type information (None for a stream of kindling's own schema-typed rows)."""
        return self._type_info

    def _output(self, output_type: Any) -> tuple[StructType, Any]:
        """A Python function's output columns and type information.

        As in PyFlink, a function over a PyFlink-typed stream without ``output_type`` produces
        untyped records (any Python object, pickled); over kindling's own rows it keeps the input's fields.
        """
        if output_type is None:
            if self._type_info is None:
                return self.schema, None
            from kindling.common.typeinfo import Types

            pickled = Types.PICKLED_BYTE_ARRAY()
            return pickled.record_schema(), pickled
        if records.is_type_info(output_type):
            return output_type.record_schema(), output_type
        return records.as_struct(output_type), None

    def assign_timestamps_and_watermarks(self, watermark_strategy: Any) -> "DataStream":
        """Event time and watermarks for this stream (PyFlink's name); kindling applies them at the source.

        Spark keeps one watermark per query, set where the source's records (and its end-of-input
        marker) enter; so the strategy goes to the source this stream reads, as if given to from_source.
        """
        if self._replan is None:
            raise ValueError(
                "assign_timestamps_and_watermarks: kindling sets event time where a source's records enter Spark; call it "
                "directly on the stream returned by from_source/from_collection (before map, filter, key_by, ...), or pass "
                "the WatermarkStrategy to from_source(source, watermark_strategy, name)")
        stream = self._replan(watermark_strategy)
        stream._name = "Timestamps/Watermarks"
        return stream

    # --- stateless transformations -----------------------------------------------------------
    def map(self, *functions: Any, output_type: Optional[records.TypeLike] = None) -> "DataStream":
        """One record out per record in.

        With Column expressions (``map(col("a") * 2, F.upper("b").alias("b"))``) the projection runs
        in Spark; with a Python function (or a MapFunction) it runs per record over Arrow batches
        and ``output_type`` gives the result's fields (default: the input's).
        """
        if functions and all(_is_column_like(f) for f in functions):
            internal = self._internal()
            return self._transform(lambda df: df.select(*functions, *internal), "Map")
        if len(functions) != 1:
            raise TypeError("map takes Column expressions, or exactly one Python function")
        function = as_callable(functions[0], "map")
        out, out_type = self._output(output_type)
        full = StructType(list(out.fields) + [self._df.schema[c] for c in self._internal()])
        run = records.map_batches(function, self._df.schema, full, self._type_info, out_type)
        mapped = self._transform(lambda df: df.mapInArrow(run, full), "Map")
        mapped._type_info = out_type
        return mapped

    def filter(self, predicate: Any) -> "DataStream":
        """Keep records matching a Column condition (in Spark) or a Python predicate (over Arrow)."""
        if _is_column_like(predicate):
            condition = F.expr(predicate) if isinstance(predicate, str) else predicate
            return self._transform(lambda df: df.where(condition), "Filter")
        function = as_callable(predicate, "filter")
        schema = self._df.schema
        run = records.filter_batches(function, schema, self._type_info)
        return self._transform(lambda df: df.mapInArrow(run, schema), "Filter")

    def flat_map(self, function: Any, output_type: Optional[records.TypeLike] = None) -> "DataStream":
        """Zero or more records per record; a Column of type ARRAY explodes in Spark, a function yields in Python."""
        if isinstance(function, Column):
            exploded = self._df.select(F.explode(function).alias("f0"), *self._internal())
            if isinstance(exploded.schema["f0"].dataType, StructType):
                exploded = exploded.select("f0.*", *self._internal())
            return self._derive(exploded, "FlatMap")
        call = as_callable(function, "flat_map")
        out, out_type = self._output(output_type)
        full = StructType(list(out.fields) + [self._df.schema[c] for c in self._internal()])
        run = records.flat_map_batches(call, self._df.schema, full, self._type_info, out_type)
        mapped = self._transform(lambda df: df.mapInArrow(run, full), "FlatMap")
        mapped._type_info = out_type
        return mapped

    def process(self, function: Any, output_type: Optional[records.TypeLike] = None) -> "SingleOutputStreamOperator":
        """Run a ProcessFunction on every record (side outputs, time); keyed state and timers need key_by first."""
        from kindling.arrow import arrow_schema
        from kindling.datastream.process import ProcessFunction, process_batches

        if not isinstance(function, ProcessFunction):
            raise TypeError(f"DataStream.process takes a ProcessFunction, got {type(function).__name__}; "
                            "a KeyedProcessFunction needs key_by(...) first")
        ship_by_value(function)
        out_user, out_type = self._output(output_type)
        carried = [self._df.schema[c] for c in self._df.columns if c == FROM_TIMER]
        tagged_schema = _tagged_schema(out_user, self._df.schema[ROWTIME], carried)
        run = process_batches(function, self._df.schema, out_user, arrow_schema(tagged_schema), self._type_info, out_type)
        tagged = self._df.mapInArrow(run, tagged_schema)
        return SingleOutputStreamOperator(self, tagged, out_user, self.schema, "Process", watermarked=self._watermarked,
                                          type_info=out_type, input_type_info=self._type_info)

    def _keyed_operation(self, adapter: Any, name: str, out_user: StructType, inputs: Sequence[tuple],
                         key_count: int, broadcast: Optional[DataFrame] = None,
                         broadcast_type: Optional[StructType] = None, bounded: Optional[bool] = None,
                         upstream: Optional[Sequence["DataStream"]] = None, out_type: Any = None,
                         input_type_infos: Optional[Sequence[Any]] = None) -> "SingleOutputStreamOperator":
        """Run an adapter in the keyed operator over ``inputs``: (DataFrame, key column names, value StructType) each."""
        from kindling.datastream import operator as op
        from kindling.runtime.plan_nodes import always_null

        spark = self._env.spark
        parallelism = int(spark.conf.get("spark.sql.shuffle.partitions"))
        slots = None
        if broadcast is not None:
            slots = _broadcast_slots(parallelism)
        frames = []
        types = [t for _, _, t in inputs] + ([broadcast_type] if broadcast is not None else [])
        total = len(types)
        for index, (df, keys, value_type) in enumerate(inputs):
            slot = F.lit(op.KEYED_SLOT) if slots is not None else None
            frames.append(op.operator_input(df, [F.col(k) for k in keys], index, total, value_type.fieldNames(), slot))
        # A key that is a record field travels once; no event time travels where no input's records have one.
        key_fields = [{fields.index(k): n for n, k in enumerate(keys) if k in fields}
                      for fields, keys in ((t.fieldNames(), k) for _, k, t in inputs)]
        timed = not all(always_null(df, ROWTIME) for df in [df for df, _, _ in inputs] + ([broadcast] if broadcast is not None else []))
        if broadcast is not None:
            assert broadcast_type is not None
            key_types = [inputs[0][0].select(k).schema.fields[0].dataType for k in inputs[0][1]]
            replicated = broadcast.withColumn("__kindling_bslot", F.explode(F.array(*[F.lit(v) for v in sorted(slots.values())])))
            nulls = [F.lit(None).cast(t) for t in key_types]
            frames.append(op.operator_input(replicated, nulls, len(inputs), total, broadcast_type.fieldNames(), F.col("__kindling_bslot")))
        processing_time = op.needs_processing_time(adapter)
        if getattr(adapter, "uses_watermark", True):
            _check_watermark_reaches([self, *(upstream or [])], name, processing_time)
        event_time_mode = self._event_time and not processing_time
        timeless = not self._event_time and op.needs_no_clock(adapter)
        chained = any(op.from_keyed_operator(df) for df, _, _ in inputs)
        type_infos = list(input_type_infos) if input_type_infos is not None else [self._type_info] + [None] * (len(types) - 1)
        pickled_key = SELECTOR_KEY in inputs[0][1]
        key_types = [frames[0].schema[op.key_column(i)].dataType for i in range(key_count)]
        runner = op.KeyedRunner(adapter, name, out_user, key_count, parallelism, [t.fieldNames() for t in types], slots,
                                event_time_mode=event_time_mode, chained=chained, input_types=type_infos, out_type=out_type,
                                pickled_key=pickled_key, key_groups=self._env.config.get(cfg.MAX_PARALLELISM),
                                key_types=key_types, value_types=types, timeless=timeless)
        ship_by_value(getattr(adapter, "_function", adapter))
        bucket = f"{op.BUCKET}{len(self._env.keyed_operators)}"
        self._env.keyed_operators.append((name, bucket))
        tagged = op.run_operator(frames, types, key_count, runner, out_user, with_slot=slots is not None, bucket=bucket,
                                 timed=timed, key_fields=key_fields)
        bounded = self._bounded if bounded is None else bounded
        result = SingleOutputStreamOperator(self, tagged, out_user, inputs[0][2], name, watermarked=False, bounded=bounded,
                                            type_info=out_type, input_type_info=type_infos[0])
        result._hides_watermark = name if self._event_time and processing_time else None
        return result

    def union(self, *streams: "DataStream") -> "DataStream":
        """Records of several streams with the same fields, as one stream."""
        df = self._df
        for other in streams:
            if [f.name for f in other.schema.fields] != [f.name for f in self.schema.fields]:
                raise ValueError(f"union needs the same fields: {self.schema.simpleString()} vs {other.schema.simpleString()}")
            df = df.unionByName(other._df, allowMissingColumns=True)
        stream = self._derive(df, "Union")
        stream._bounded = self._bounded and all(s._bounded for s in streams)
        stream._hides_watermark = next((s._hides_watermark for s in (self, *streams) if s._hides_watermark), None)
        return stream

    def connect(self, other: Any) -> Any:
        """Connect with another stream (ConnectedStreams) or, on a keyed stream, with a broadcast stream."""
        from kindling.datastream.broadcast import BroadcastConnectedStream, BroadcastStream
        from kindling.datastream.connected import ConnectedStreams

        if isinstance(other, BroadcastStream):
            if not isinstance(self, KeyedStream):
                raise ValueError("connect(broadcast_stream) needs a keyed stream here: call key_by(...) first "
                                 "(the non-keyed BroadcastProcessFunction is not supported)")
            return BroadcastConnectedStream(self, other)
        if not isinstance(other, DataStream):
            raise TypeError(f"connect takes a DataStream or a BroadcastStream, got {type(other).__name__}")
        return ConnectedStreams(self, other)

    def broadcast(self, *descriptors: Any) -> Any:
        """Broadcast this stream's records to every parallel instance; descriptors name the broadcast state."""
        from kindling.datastream.broadcast import BroadcastStream
        from kindling.datastream.state import MapStateDescriptor

        for descriptor in descriptors:
            if not isinstance(descriptor, MapStateDescriptor):
                raise TypeError(f"broadcast state is described by MapStateDescriptors, got {type(descriptor).__name__}")
        return BroadcastStream(self, descriptors)

    def join(self, other: "DataStream") -> Any:
        """A window join: ``join(other).where(key).equal_to(key).window(assigner).apply(JoinFunction)``."""
        from kindling.datastream.joins import JoinedStreams

        return JoinedStreams(self, other)

    def co_group(self, other: "DataStream") -> Any:
        """Like join, but the function gets both sides' records of a window as two lists (CoGroupFunction)."""
        from kindling.datastream.joins import JoinedStreams

        return JoinedStreams(self, other, co_group=True)

    def window_all(self, assigner: WindowAssigner) -> "WindowedStream":
        """Windows over the whole (non-keyed) stream; they run in one task, as Flink's non-parallel windowAll."""
        all_key = INTERNAL_PREFIX + "all"
        keyed = KeyedStream(self._derive(self._df.withColumn(all_key, F.lit(0)), "WindowAll"), [all_key])
        return WindowedStream(keyed, assigner, non_keyed=True)

    def count_window_all(self, size: int, slide: int = 0) -> "WindowedStream":
        """Count windows over the whole (non-keyed) stream."""
        all_key = INTERNAL_PREFIX + "all"
        keyed = KeyedStream(self._derive(self._df.withColumn(all_key, F.lit(0)), "WindowAll"), [all_key])
        windowed = keyed.count_window(size, slide)
        windowed._non_keyed = True
        return windowed

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
        run = _key_batches(function, self._df.schema, self._type_info)
        full = StructType(list(self._df.schema.fields) + [StructField(SELECTOR_KEY, BinaryType(), True)])
        return KeyedStream(self._transform(lambda df: df.mapInArrow(run, full), "KeyBy"), [SELECTOR_KEY])

    # --- sinks -------------------------------------------------------------------------------
    def sink_to(self, sink: Sink) -> "DataStreamSink":
        """Write the stream into a sink (a connector's ``Sink``)."""
        if not isinstance(sink, Sink):
            raise TypeError(f"sink_to takes a kindling Sink (for example KafkaSink.builder()...build()), got {type(sink).__name__}")
        if sink.prepare is not None:
            stream, prepared = sink.prepare(self)
            return self._env._add_sink(stream, prepared)
        return self._env._add_sink(self, sink)

    add_sink = sink_to

    def print(self, sink_identifier: Optional[str] = None) -> "DataStreamSink":
        """Print every record to stdout as PyFlink does, optionally prefixed by an identifier.

        kindling's own rows print as Flink's ``+I[...]``; PyFlink-typed records as PyFlink prints
        them (a tuple as ``(a,1)``, an untyped object as Python's ``str``). With parallelism above 1
        each line starts with ``N> ``, the number of the task that printed it.
        """
        options = {"print-identifier": sink_identifier} if sink_identifier else {}
        if self._type_info is None:
            return self.sink_to(Sink("print", options))
        from kindling.common.typeinfo import Types

        lines = self.map(records.Codec(self.schema, self._type_info).format, output_type=Types.STRING())
        parallelism = self._env.get_parallelism()
        return lines.sink_to(Sink("print", {**options, "kindling.print.plain": "true", "kindling.print.parallelism": str(parallelism)}))

    def execute_and_collect(self, job_name: Optional[str] = None, limit: Optional[int] = None, timeout: float = 600) -> CollectedRows:
        """Run a bounded pipeline to its end and return its records (PyFlink's execute_and_collect), a list that is
        also PyFlink's ``CloseableIterator``: ``with ds.execute_and_collect() as rows: ...``."""
        return CollectedRows(self._env._collect(self, job_name=job_name, limit=limit, timeout=timeout))


class SingleOutputStreamOperator(DataStream):
    """The main output of a process function; ``get_side_output(tag)`` gives the records sent to a tag."""

    def __init__(self, parent: DataStream, tagged: DataFrame, out_user: StructType, input_type: StructType, name: str,
                 watermarked: bool, bounded: Optional[bool] = None, type_info: Any = None, input_type_info: Any = None) -> None:
        from kindling.datastream.operator import FROM_TIMER
        from kindling.datastream.side_outputs import TAG_COLUMN

        internal = [F.col(c) for c in (ROWTIME, FROM_TIMER) if c in tagged.columns]
        fields = [F.col(f) for f in out_user.fieldNames()]

        def main_output(df: DataFrame) -> DataFrame:
            return df.where(F.col(TAG_COLUMN).isNull()).select(*fields, *internal)

        main = main_output(tagged)
        super().__init__(parent._env, main, name=name, event_time=parent._event_time,
                         bounded=parent._bounded if bounded is None else bounded, watermarked=watermarked, type_info=type_info)
        self._tagged = tagged
        self._input_type = input_type
        self._input_type_info = input_type_info
        self._origin, self._branch = self, main_output

    def get_side_output(self, output_tag: Any) -> DataStream:
        """The records the function sent to ``output_tag`` (of the tag's type, else of the operator's input type)."""
        from kindling.arrow import arrow_schema
        from kindling.datastream.side_outputs import SIDE_COLUMN, TAG_COLUMN, OutputTag, decode_batches

        if not isinstance(output_tag, OutputTag):
            raise TypeError(f"get_side_output takes an OutputTag, got {type(output_tag).__name__}")
        if records.is_type_info(output_tag.type_info):
            side_type = output_tag.type_info
        elif output_tag.type_info is None and self._input_type_info is not None:
            side_type = self._input_type_info  # PyFlink: records of the operator's input type
        else:
            side_type = None
        schema = records.as_struct(output_tag.type_info) if output_tag.type_info is not None else self._input_type
        from kindling.datastream.operator import FROM_TIMER

        internal = [c for c in (ROWTIME, FROM_TIMER) if c in self._tagged.columns]
        full = StructType(list(schema.fields) + [self._tagged.schema[c] for c in internal])
        decode = decode_batches(schema, internal, arrow_schema(full), side_type)
        tag = output_tag.tag_id

        def side_output(df: DataFrame) -> DataFrame:
            return df.where(F.col(TAG_COLUMN) == F.lit(tag)).select(F.col(SIDE_COLUMN), *internal).mapInArrow(decode, full)

        side_stream = DataStream(self._env, side_output(self._tagged), name=f"SideOutput({tag})", event_time=self._event_time,
                                 bounded=self._bounded, watermarked=self._watermarked, type_info=side_type)
        side_stream._hides_watermark = self._hides_watermark
        side_stream._origin, side_stream._branch = self, side_output
        return side_stream


def _key_batches(function: Callable[[Any], Any], schema: StructType, type_info: Any) -> Callable[..., Any]:
    """A mapInArrow function adding each record's key, pickled, as SELECTOR_KEY; the record is unchanged."""
    import pickle

    import pyarrow as pa

    names = records.user_columns(schema)
    decoder = records.codec(schema, type_info)

    def run(batches: Any) -> Any:
        from kindling.datastream.errors import RecordCalls

        dumps = pickle.dumps
        for batch in batches:
            keys = []
            with RecordCalls(function, "KeyBy") as calls:
                for row in records.to_rows(batch, names, decoder):
                    calls.record = row
                    keys.append(dumps(function(row), protocol=5))
            yield pa.RecordBatch.from_arrays(list(batch.columns) + [pa.array(keys, type=pa.binary())],
                                             names=list(batch.schema.names) + [SELECTOR_KEY])

    return run


def _check_watermark_reaches(streams: Sequence[DataStream], operation: str, processing_time: bool) -> None:
    """Refuse a keyed operator over event time that Spark would give no watermark.

    Spark passes the watermark through a keyed operator (transformWithState) only in its event-time
    mode; an operator whose function registers processing-time timers runs in processing-time mode,
    and every keyed operator after it sees no watermark: its event-time timers and windows would
    never fire, not even at the end of input. Operators using processing time only are unaffected.
    """
    if processing_time:
        return
    for stream in streams:
        if stream._event_time and stream._hides_watermark:
            raise ValueError(
                f"{operation}: its input comes from the keyed operator '{stream._hides_watermark}', which registers "
                "processing-time timers and so runs in Spark's processing-time mode, where Spark passes no event-time "
                f"watermark on; '{operation}' would never see event time advance. Send '{stream._hides_watermark}''s "
                "output to a sink and read it back in another job, use event-time timers in it, or make this "
                "operator use processing time only."
            )


def _tagged_schema(out_user: StructType, rowtime: Any, carried: Sequence[Any] = ()) -> StructType:
    from pyspark.sql.types import BinaryType, StructField

    from kindling.datastream.side_outputs import SIDE_COLUMN, TAG_COLUMN

    return StructType(list(out_user.fields) + [rowtime, *carried, StructField(TAG_COLUMN, StringType(), True),
                                               StructField(SIDE_COLUMN, BinaryType(), True)])


def _broadcast_slots(partitions: int) -> dict:
    """For each shuffle partition, a slot number whose broadcast group Spark's hash partitioning sends there.

    The keyed operator is hash-partitioned on (slot, key group); broadcast records have no key group
    (NO_KEY_GROUP), so their partition depends on the slot alone.
    """
    from kindling.datastream.operator import KEYED_SLOT, NO_KEY_GROUP

    slots: dict = {}
    slot = 0
    while len(slots) < partitions:
        if slot != KEYED_SLOT:
            slots.setdefault(spark_partition([slot, NO_KEY_GROUP], partitions), slot)
        slot += 1
    return slots


class DataStreamSink:
    """The end of a pipeline: a stream bound to a sink, with Flink's ``name``/``uid``."""

    def __init__(self, stream: DataStream, sink: Sink, index: int) -> None:
        self.stream = stream
        self.sink = sink
        self._uid = f"sink-{index}-{sink.connector}"
        self._name = f"Sink: {sink.connector}"
        # Spark output mode of the sink's query: "append", or "update" for updating SQL results (set by kindling.sql).
        self.output_mode = "append"

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
        super().__init__(stream._env, stream._df, name=stream._name, event_time=stream._event_time, bounded=stream._bounded,
                         watermarked=stream._watermarked, type_info=stream._type_info)
        self._hides_watermark = stream._hides_watermark
        self._origin, self._branch = stream._origin, stream._branch
        self.keys = list(keys)

    @property
    def key_fields(self) -> list[str]:
        """The key's fields that are record fields (a Python selector's key is not one)."""
        return [k for k in self.keys if not k.startswith(INTERNAL_PREFIX)]

    def window(self, assigner: WindowAssigner) -> "WindowedStream":
        """Group each key's records into windows (tumbling, sliding or session; event or processing time)."""
        return WindowedStream(self, assigner)

    def count_window(self, size: int, slide: int = 0) -> "WindowedStream":
        """Windows of ``size`` elements per key (every ``slide`` elements when sliding), as Flink's countWindow."""
        from kindling.datastream.evictors import CountEvictor
        from kindling.datastream.triggers import CountTrigger, PurgingTrigger
        from kindling.datastream.windows import GlobalWindows

        if size <= 0 or slide < 0:
            raise ValueError(f"count_window: size must be positive and slide not negative, got size={size}, slide={slide}")
        windowed = WindowedStream(self, GlobalWindows())
        if slide == 0:
            return windowed.trigger(PurgingTrigger.of(CountTrigger.of(size)))
        return windowed.evictor(CountEvictor.of(size)).trigger(CountTrigger.of(slide))

    # --- rolling aggregations: one updated result per record, as Flink's keyed sum/min/max/reduce --
    def _rolling(self, kind: str, field: Optional[Union[str, int]], function: Any = None) -> SingleOutputStreamOperator:
        from kindling.common.typeinfo import PickledBytesTypeInfo
        from kindling.datastream.rolling import RollingAdapter

        fields = self.schema.fieldNames()
        name = None
        position = None
        if field is not None and isinstance(self._type_info, PickledBytesTypeInfo):
            position = field  # untyped records: a position (or key) in the Python object itself
        elif field is not None:
            if isinstance(field, int):
                if not 0 <= field < len(fields):
                    raise ValueError(f"{kind}: field position {field} is out of range for fields {fields}")
                field = fields[field]
            if field not in fields:
                raise ValueError(f"{kind}: no field {field!r}; the stream has {fields}")
            name = field
            position = fields.index(field)
        reduce = as_callable(function, "reduce") if function is not None else None
        adapter = RollingAdapter(kind, name, fields, reduce, typed=self._type_info is not None, position=position,
                                 batch=self._env.is_batch() and self._bounded)
        return self._keyed_operation(adapter, f"Keyed{kind.title()}", self.schema,
                                     [(self._df, list(self.keys), self.schema)], len(self.keys), out_type=self._type_info)

    def sum(self, field: Union[str, int]) -> SingleOutputStreamOperator:
        """Running sum of a field per key, emitted for every record."""
        return self._rolling("sum", field)

    def min(self, field: Union[str, int]) -> SingleOutputStreamOperator:
        """Running minimum of a field per key (other fields from the key's first record)."""
        return self._rolling("min", field)

    def max(self, field: Union[str, int]) -> SingleOutputStreamOperator:
        """Running maximum of a field per key (other fields from the key's first record)."""
        return self._rolling("max", field)

    def min_by(self, field: Union[str, int]) -> SingleOutputStreamOperator:
        """The record with the smallest value of a field so far, per key."""
        return self._rolling("min_by", field)

    def max_by(self, field: Union[str, int]) -> SingleOutputStreamOperator:
        """The record with the largest value of a field so far, per key."""
        return self._rolling("max_by", field)

    def reduce(self, function: Any) -> SingleOutputStreamOperator:
        """Running result of a ReduceFunction per key, emitted for every record."""
        return self._rolling("reduce", None, function)

    def interval_join(self, other: "KeyedStream") -> Any:
        """Join with another keyed stream on records whose timestamps lie within bounds of each other."""
        from kindling.datastream.joins import IntervalJoin

        if not isinstance(other, KeyedStream):
            raise TypeError("interval_join takes a KeyedStream: call key_by(...) on the other stream")
        return IntervalJoin(self, other)

    def process(self, function: Any, output_type: Optional[records.TypeLike] = None) -> SingleOutputStreamOperator:
        """Run a KeyedProcessFunction: keyed state, event- and processing-time timers, side outputs."""
        from kindling.datastream.process import KeyedProcessAdapter, KeyedProcessFunction, ProcessFunction

        if isinstance(function, ProcessFunction):
            return DataStream.process(self, function, output_type)
        if not isinstance(function, KeyedProcessFunction):
            raise TypeError(f"KeyedStream.process takes a KeyedProcessFunction, got {type(function).__name__}")
        out_user, out_type = self._output(output_type)
        return self._keyed_operation(KeyedProcessAdapter(function), type(function).__name__, out_user,
                                     [(self._df, list(self.keys), self.schema)], len(self.keys), out_type=out_type)


class WindowedStream:
    """A keyed stream cut into windows; an aggregation turns it back into a stream of window results.

    Results carry the key fields, the aggregate, and ``window_start``/``window_end`` (a convenience
    over Flink, where those need a ProcessWindowFunction). A result's event time is the window's
    last millisecond, as in Flink, so windows can be chained. Results are emitted once, when the
    watermark passes the window's end (Spark's append mode).
    """

    def __init__(self, keyed: KeyedStream, assigner: WindowAssigner, non_keyed: bool = False) -> None:
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
        self._non_keyed = non_keyed
        self._trigger: Any = None
        self._evictor: Any = None
        self._lateness_ms = 0
        self._late_tag: Any = None

    # --- Flink's window configuration (these take the keyed-state path) ------------------------------
    def trigger(self, trigger: Any) -> "WindowedStream":
        """Decide when windows fire (CountTrigger, ContinuousEventTimeTrigger, PurgingTrigger, ...)."""
        from kindling.datastream.triggers import Trigger

        if not isinstance(trigger, Trigger):
            raise TypeError(f"trigger() takes a Trigger, got {type(trigger).__name__}")
        self._trigger = trigger
        return self

    def evictor(self, evictor: Any) -> "WindowedStream":
        """Remove elements from a window before/after its function runs (CountEvictor, TimeEvictor)."""
        from kindling.datastream.evictors import Evictor

        if not isinstance(evictor, Evictor):
            raise TypeError(f"evictor() takes an Evictor, got {type(evictor).__name__}")
        self._evictor = evictor
        return self

    def allowed_lateness(self, lateness: Any) -> "WindowedStream":
        """Keep windows this long past their end: late records update (re-fire) them instead of being dropped."""
        from kindling.durations import parse_duration, to_millis

        self._lateness_ms = to_millis(parse_duration(lateness, name="allowed_lateness"))
        return self

    def side_output_late_data(self, output_tag: Any) -> "WindowedStream":
        """Send records too late for all their windows to a side output instead of dropping them."""
        from kindling.datastream.side_outputs import OutputTag

        if not isinstance(output_tag, OutputTag):
            raise TypeError(f"side_output_late_data takes an OutputTag, got {type(output_tag).__name__}")
        self._late_tag = output_tag
        return self

    def _needs_state(self) -> bool:
        return (
            self._trigger is not None or self._evictor is not None or self._lateness_ms > 0 or self._late_tag is not None
            or (self._assigner.is_event_time and not self._keyed._watermarked)
            or self._keyed._type_info is not None  # PyFlink-typed records: functions see them as PyFlink gives them
            or not getattr(self._assigner, "spark_native", True)  # count windows, dynamic session gaps
        )

    def _state_path(self, name: str, out_user: StructType, function: Any = None, incremental: Any = None,
                     emit: Optional[Callable[..., list]] = None, with_bounds: bool = False,
                     out_type: Any = None) -> "SingleOutputStreamOperator":
        """Run the windows as keyed state with triggers and timers (Flink's WindowOperator)."""
        from kindling.datastream.triggers import EventTimeTrigger, ProcessingTimeTrigger
        from kindling.datastream.window_operator import WindowAdapter, function_emitter, window_bounds

        keyed = self._keyed
        trigger = self._trigger or (EventTimeTrigger() if self._assigner.is_event_time else ProcessingTimeTrigger())
        if emit is None:
            if function is not None:
                emit = function_emitter(function, self._non_keyed)
            else:
                key_names = [] if self._non_keyed else keyed.key_fields
                result_type = StructType([f for f in out_user.fields if f.name not in key_names + ["window_start", "window_end"]])

                def emit(key: Any, window: Any, values: list, context: Any) -> list:
                    key_values = () if not key_names else (key if isinstance(key, tuple) else (key,))
                    return [key_values + records.normalise(v, result_type) + window_bounds(window) for v in values]
        for shipped in (function, incremental[1] if incremental else None, trigger, self._evictor):
            if shipped is not None:
                ship_by_value(shipped)
        adapter = WindowAdapter(self._assigner, trigger, self._lateness_ms, self._late_tag.tag_id if self._late_tag else None,
                                emit, function, incremental, self._evictor)
        adapter._function = function or adapter._function
        return keyed._keyed_operation(adapter, name, out_user, [(keyed._df, list(keyed.keys), keyed.schema)], len(keyed.keys),
                                      out_type=out_type)

    def _bounded_output(self, result: StructType) -> StructType:
        """Window results without a window function: key fields, the result's fields, window_start/window_end."""
        from pyspark.sql.types import StructField, TimestampType

        keys = [] if self._non_keyed else [self._keyed._df.schema[k] for k in self._keyed.key_fields]
        fields = keys + [f for f in result.fields if f.name not in self._keyed.keys]
        return StructType(fields + [StructField("window_start", TimestampType(), True), StructField("window_end", TimestampType(), True)])

    def process(self, function: Any, output_type: Optional[records.TypeLike] = None) -> "SingleOutputStreamOperator":
        """Run a ProcessWindowFunction over each firing window's elements, with the window in its context."""
        out_user, out_type = self._keyed._output(output_type)
        return self._state_path("WindowProcess", out_user, function=function, out_type=out_type)

    def apply(self, function: Any, output_type: Optional[records.TypeLike] = None) -> "SingleOutputStreamOperator":
        """Run a WindowFunction (key, window, elements) over each firing window."""
        return self.process(function, output_type)

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

    def aggregate(self, *aggregations: Any, output_type: Optional[records.TypeLike] = None, window_function: Any = None) -> DataStream:
        """Aggregate each window: built-in Spark aggregate Columns (fast, in the JVM) or a Flink AggregateFunction.

        ``aggregate(F.count("*").alias("n"), F.avg("x").alias("avg_x"))`` runs as a Spark aggregation.
        ``aggregate(MyAggregateFunction(), output_type="total BIGINT")`` runs the function in Python
        over each window's records when the window fires.
        """
        if aggregations and all(isinstance(a, Column) for a in aggregations) and not self._needs_state():
            df, window = self._grouped()
            keys = [F.col(k) for k in self._keyed.keys]
            aggregated = df.groupBy(*keys, window).agg(*aggregations)
            agg_names = [c for c in aggregated.columns if c not in self._keyed.keys and c != WINDOW]
            return self._finish(aggregated, [*keys, *[F.col(c) for c in agg_names]], "WindowAggregate")
        if len(aggregations) == 2 and not isinstance(aggregations[1], (Column, AggregateFunction)):
            aggregations, window_function = aggregations[:1], aggregations[1]
        if aggregations and all(isinstance(a, Column) for a in aggregations):
            raise ValueError("Spark aggregate Columns run as Spark's windowed aggregation, which has no triggers, evictors, "
                             "allowed lateness or late-data side output: use an AggregateFunction for those")
        if len(aggregations) != 1 or not isinstance(aggregations[0], AggregateFunction):
            raise TypeError("aggregate takes Spark aggregate Columns, or one AggregateFunction with an output_type")
        function: AggregateFunction = aggregations[0]
        if output_type is None and self._keyed._type_info is None:
            raise ValueError("aggregate(AggregateFunction) needs output_type, e.g. output_type='total BIGINT'")
        if self._keyed._type_info is not None:  # PyFlink: the result is the function's (or the window function's) output
            out, out_type = self._keyed._output(output_type)
            if window_function is not None:
                return self._state_path("WindowAggregate", out, function=window_function, incremental=("aggregate", function),
                                        out_type=out_type)
            return self._state_path("WindowAggregate", out, incremental=("aggregate", function),
                                    emit=lambda key, window, values, context: list(values), out_type=out_type)
        if window_function is not None:
            return self._state_path("WindowAggregate", records.as_struct(output_type), function=window_function,
                                    incremental=("aggregate", function))
        if self._needs_state():
            out = self._bounded_output(records.as_struct(output_type, single_name="result"))
            return self._state_path("WindowAggregate", out, incremental=("aggregate", function))
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
        if self._needs_state():
            from kindling.datastream.functions import CountAggregate

            return self.aggregate(CountAggregate(), output_type="count BIGINT")
        return self.aggregate(F.count(F.lit(1)).alias("count"))

    def _field_aggregate(self, field: Union[str, int], function: Callable[[Column], Column], name: str) -> DataStream:
        fields = self._keyed.schema.fieldNames()
        if isinstance(field, int):
            if not 0 <= field < len(fields):
                raise ValueError(f"{name}: field position {field} is out of range for fields {fields}")
            field = fields[field]
        if field not in fields:
            raise ValueError(f"{name}: no field {field!r}; the stream has {fields}")
        if self._needs_state():
            index = fields.index(field)
            combine = {"sum": lambda a, b: a + b, "min": min, "max": max}[name]

            def keep_first(a: Row, b: Row) -> tuple:
                return tuple(a[:index]) + (combine(a[index], b[index]),) + tuple(a[index + 1:])

            return self.reduce(keep_first)
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

    def reduce(self, function: Any, window_function: Any = None, output_type: Optional[records.TypeLike] = None) -> DataStream:
        """Combine each window's records pairwise with a Python ReduceFunction; the result has the input's fields.

        With a ``window_function`` (ProcessWindowFunction) the reduced record is handed to it with the
        window metadata (Flink's incremental pre-aggregation).
        """
        reduce = as_callable(function, "reduce")
        schema = self._keyed.schema
        if self._keyed._type_info is not None:  # PyFlink-typed records are reduced as they are
            if window_function is not None:
                out, out_type = self._keyed._output(output_type)
                return self._state_path("WindowReduce", out, function=window_function, incremental=("reduce", reduce),
                                        out_type=out_type)
            return self._state_path("WindowReduce", schema, incremental=("reduce", reduce),
                                    emit=lambda key, window, values, context: list(values), out_type=self._keyed._type_info)
        fields = schema.fieldNames()
        factory = Row(*fields)

        def reduce_rows(a: Any, b: Any) -> Any:
            result = reduce(a, b)
            if isinstance(result, dict):
                return factory(*[result.get(n) for n in fields])
            if isinstance(result, tuple) and not hasattr(result, "__fields__"):
                return factory(*result)
            return result

        if window_function is not None:
            out = records.as_struct(output_type) if output_type is not None else schema
            return self._state_path("WindowReduce", out, function=window_function, incremental=("reduce", reduce_rows))
        if self._needs_state():
            out = StructType([f for f in schema.fields] + list(self._bounded_output(StructType([])).fields)[-2:])
            key_free = StructType(list(schema.fields))

            def emit(key: Any, window: Any, values: list, context: Any) -> list:
                from kindling.datastream.window_operator import window_bounds

                return [records.normalise(v, key_free) + window_bounds(window) for v in values]

            return self._state_path("WindowReduce", out, incremental=("reduce", reduce_rows), emit=emit)

        def fold(values: list[Row]) -> tuple:
            result: Any = values[0]
            for value in values[1:]:
                result = reduce(result, value)
                if isinstance(result, dict):
                    result = Row(**{n: result.get(n) for n in fields})
            return records.normalise(result, schema)

        return self._fold_in_python(fold, schema, keep_keys=False, name="WindowReduce")
