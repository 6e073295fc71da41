"""StreamEnvironment: the entry point, like Flink's StreamExecutionEnvironment, running on Spark."""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.functions import ArrowUDFType
from pyspark.sql.types import (
    DataType,
    DateType,
    LongType,
    NumericType,
    StringType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from kindling import config as cfg
from kindling.config import Configuration
from kindling.connectors.base import (
    EOS_COLUMN,
    INTERNAL_PREFIX,
    ROWKIND_COLUMN,
    Sink,
    Source,
    spark_format,
)
from kindling.connectors.bounded_read import MICRO_BATCHES_OPTION
from kindling.connectors.collection import collection_source
from kindling.datastream import records
from kindling.datastream.functions import ship_by_value
from kindling.datastream.operator_sinks import OperatorSinks, operator_sinks
from kindling.datastream.stream import ROWTIME, DataStream, DataStreamSink
from kindling.datastream.watermarks import WatermarkStrategy
from kindling.durations import DurationLike, spark_interval, to_millis
from kindling.options import OptionError
from kindling.row_layout import LATE_WATERMARK_COLUMN
from kindling.runtime import interrupts, rerun, savepoints, state_layout
from kindling.runtime.job import JobClient, QueryPlan, separate_exchanges
from kindling.runtime.job_listeners import JobListener, process_listeners
from kindling.runtime.progress import END_OF_TIME, END_OF_TIME_THRESHOLD
from kindling.runtime.scratch import retire
from kindling.runtime.session import get_or_create_session

DEFAULT_JOB_NAME = "kindling-job"

# An always-true but non-deterministic condition. Spark neither merges a filter with a
# non-deterministic one below it nor pushes it further down, so user filters stay above the
# end-of-input filter: the marker row always reaches the watermark operator, and user
# expressions never see it.
_OPTIMIZER_BARRIER = "spark_partition_id() >= 0"
_EOS = f"`{EOS_COLUMN}`"
# The filters that take the end-of-input marker out of a source's rows, each one Spark expression
# (one call into the JVM where the same condition built from Column objects takes a dozen).
_WITHOUT_MARKER = f"({_EOS} IS NULL OR NOT {_EOS}) AND {_OPTIMIZER_BARRIER}"
_BEFORE_END_OF_TIME = (f"`{ROWTIME}` < timestamp_millis({int(END_OF_TIME_THRESHOLD.timestamp() * 1000)}) "
                       f"AND {_OPTIMIZER_BARRIER}")


class StreamEnvironment:
    """Builds pipelines and runs them as Spark streaming queries (one per sink)."""

    def __init__(self, configuration: Union[Configuration, Mapping[str, Any], None] = None, spark: Optional[SparkSession] = None) -> None:
        if isinstance(configuration, Configuration):
            self.config = configuration.copy()
        else:
            self.config = Configuration(configuration or {})
        # (name, key-group column) of each keyed operator built in this environment, so that a sink's
        # plan tells which keyed state its checkpoint holds.
        self.keyed_operators: list[tuple[str, str]] = []
        # Listeners of the whole process (a job manager's driver, `kindling run`'s options) impose their settings first.
        self._listeners: list[JobListener] = process_listeners()
        for listener in self._listeners:
            listener.configure(self.config)
        if (active := rerun.active()) is not None:
            self.config.update(active.settings)
        self._spark = spark
        self._sinks: list[DataStreamSink] = []
        self._unnamed_jobs = 0  # execute() calls without a job name so far (see _job_name)
        self._job_sources: list[Source] = []  # sources read since the last job started (their on_job_end steps)

    @staticmethod
    def get_execution_environment(configuration: Union[Configuration, Mapping[str, Any], None] = None) -> "StreamEnvironment":
        """PyFlink's factory name."""
        return StreamEnvironment(configuration)

    # --- configuration -------------------------------------------------------------------------
    @property
    def spark(self) -> SparkSession:
        """The SparkSession, created on first use from this environment's configuration."""
        if self._spark is None:
            self._spark = get_or_create_session(self.config)
        return self._spark

    def set_parallelism(self, parallelism: int) -> "StreamEnvironment":
        self.config.set(cfg.PARALLELISM.key, parallelism)
        return self

    def get_parallelism(self) -> int:
        """``parallelism.default``, or the local cores Spark uses when it is not set."""
        value = self.config.get(cfg.PARALLELISM)
        return int(value) if value else (os.cpu_count() or 1)

    def set_runtime_mode(self, execution_mode: Any) -> "StreamEnvironment":
        """PyFlink's ``set_runtime_mode(RuntimeExecutionMode.BATCH)``: ``execution.runtime-mode``."""
        name = getattr(execution_mode, "name", execution_mode)
        self.config.set(cfg.RUNTIME_MODE.key, str(name).lower())
        return self

    def is_batch(self) -> bool:
        """Whether bounded pipelines run in Flink's batch execution mode (``execution.runtime-mode: batch``).

        A program re-run for reconciliation (:mod:`kindling.runtime.rerun`) runs in batch mode whatever it sets."""
        if rerun.active() is not None:
            return True
        return str(self.config.get(cfg.RUNTIME_MODE)).lower() == "batch"

    def get_config(self) -> Any:
        """PyFlink's ExecutionConfig view of this environment's configuration."""
        from kindling.common import ExecutionConfig

        return ExecutionConfig(self.config)

    def set_stream_time_characteristic(self, characteristic: Any) -> "StreamEnvironment":
        """Accepted as in PyFlink (deprecated there): event time follows the watermark strategy given to a source."""
        return self

    def set_buffer_timeout(self, timeout_millis: int) -> "StreamEnvironment":
        """Accepted for PyFlink compatibility (``execution.buffer-timeout``): Spark ships records per micro-batch."""
        self.config.set(cfg.BUFFER_TIMEOUT.key, f"{int(timeout_millis)} ms")
        return self

    def get_buffer_timeout(self) -> int:
        return to_millis(self.config.get(cfg.BUFFER_TIMEOUT))

    def set_max_parallelism(self, max_parallelism: int) -> "StreamEnvironment":
        """The key groups keyed state is stored by (``pipeline.max-parallelism``); fixed for the life of a job's state."""
        self.config.set(cfg.MAX_PARALLELISM.key, max_parallelism)
        return self

    def get_max_parallelism(self) -> int:
        """``pipeline.max-parallelism`` as set, -1 when it is not (Flink's answer; kindling then uses 128 key groups)."""
        return int(self.config.get(cfg.MAX_PARALLELISM)) if self.config.contains(cfg.MAX_PARALLELISM.key) else -1

    def set_default_local_parallelism(self, parallelism: int) -> "StreamEnvironment":
        """The parallelism of a local environment: ``parallelism.default`` here (kindling's local Spark)."""
        return self.set_parallelism(parallelism)

    def get_default_local_parallelism(self) -> int:
        return self.get_parallelism()

    def disable_operator_chaining(self) -> "StreamEnvironment":
        """Accepted (``pipeline.operator-chaining.enabled``): Spark fuses a job's stages by its own rules."""
        self.config.set(cfg.OPERATOR_CHAINING.key, False)
        return self

    def is_chaining_enabled(self) -> bool:
        return bool(self.config.get(cfg.OPERATOR_CHAINING))

    def set_default_savepoint_directory(self, directory: str) -> "StreamEnvironment":
        """Where ``stop-with-savepoint`` writes when no path is given (``state.savepoints.dir``)."""
        self.config.set(cfg.SAVEPOINTS_DIR.key, directory)
        return self

    def get_default_savepoint_directory(self) -> Optional[str]:
        """The directory set by the program or a -D option, None when none is (Flink's answer; kindling then uses
        ``.kindling/savepoints``)."""
        if not self.config.contains(cfg.SAVEPOINTS_DIR.key):
            return None
        return re.sub(r"^file:///", "file:/", str(self.config.get(cfg.SAVEPOINTS_DIR)))  # as Flink's Path prints it

    def configure(self, configuration: Any) -> "StreamEnvironment":
        """Apply a PyFlink ``Configuration`` (or a mapping) to this environment: each key is checked as a -D option is."""
        values = configuration.to_dict() if hasattr(configuration, "to_dict") else dict(configuration)
        self.config.update(values)
        return self

    def get_checkpoint_config(self) -> Any:
        """PyFlink's CheckpointConfig of this environment (``execution.checkpointing.*``)."""
        from kindling.datastream.checkpoint_config import CheckpointConfig

        return CheckpointConfig(self.config)

    def get_checkpointing_mode(self) -> Any:
        return self.get_checkpoint_config().get_checkpointing_mode()

    get_checkpointing_consistency_mode = get_checkpointing_mode

    def is_unaligned_checkpoints_enabled(self) -> bool:
        return self.get_checkpoint_config().is_unaligned_checkpoints_enabled()

    def is_force_unaligned_checkpoints(self) -> bool:
        return self.get_checkpoint_config().is_force_unaligned_checkpoints()

    def enable_changelog_state_backend(self, enabled: bool) -> "StreamEnvironment":
        """Accepted: Spark's state store versions state with each micro-batch itself."""
        self._changelog_state_backend = bool(enabled)
        return self

    def is_changelog_state_backend_enabled(self) -> Optional[bool]:
        """As the program set it, None when it did not (Flink's answer)."""
        return getattr(self, "_changelog_state_backend", None)

    def register_slot_sharing_group(self, slot_sharing_group: Any) -> "StreamEnvironment":
        """Accepted: Spark schedules tasks on its executors' cores, not in Flink's slots."""
        return self

    def get_execution_plan(self) -> str:
        """Not supported: Flink's plan JSON describes Flink's stream graph (operator ids, chaining, ship strategies),
        which a Spark job does not have; ``DataStream.explain`` style output is Spark's."""
        raise NotImplementedError("get_execution_plan() is a PyFlink API that kindling does not support: a kindling job runs "
                                  "as Spark streaming queries, not as Flink's stream graph; the job manager's REST API "
                                  "(/jobs/<id>/plan) and dashboard show a running job's plan")

    def close(self) -> None:
        """Accepted: the environment holds nothing beyond the process's Spark session."""

    def add_python_file(self, file_path: str) -> None:
        """Make a Python file or directory importable by the program and its user functions."""
        directory = os.path.dirname(os.path.abspath(file_path)) if os.path.isfile(file_path) else os.path.abspath(file_path)
        if directory not in sys.path:
            sys.path.insert(0, directory)

    def set_python_requirements(self, requirements_file_path: str, requirements_cache_dir: Optional[str] = None) -> None:
        """PyFlink installs these into its Python workers; kindling's workers run this interpreter, so it checks that
        the interpreter meets them and fails naming any that it does not (``requirements_cache_dir`` is not needed)."""
        from kindling.runtime.python_requirements import check_requirements

        check_requirements(requirements_file_path)

    def add_python_archive(self, archive_path: str, target_dir: Optional[str] = None) -> None:
        """Not supported: PyFlink unpacks the archive in each Python worker's working directory, which Spark's
        workers do not share; the message says what to do instead."""
        raise NotImplementedError(
            f"add_python_archive('{archive_path}') is a PyFlink API that kindling does not support: Spark's Python workers "
            "do not run in a directory of the program's; unpack the archive where the program can read it (an absolute "
            "path), or install its Python packages into kindling's interpreter")

    def add_jars(self, *jars: str) -> None:
        """Accepted with no effect: PyFlink programs add Flink's connector and format jars (Kafka, Avro, ...), which
        kindling does not need: its connectors and formats are Python Data Sources on Spark, always there. A jar
        of Java user functions gives kindling nothing to call either; such a function fails where it is used."""

    add_classpaths = add_jars

    def enable_checkpointing(self, interval: DurationLike, mode: Any = None) -> "StreamEnvironment":
        """Checkpoint (run a micro-batch) every ``interval``; a bare number is milliseconds as in Flink.

        ``mode`` (CheckpointingMode) is recorded (``execution.checkpointing.mode``): a micro-batch always gives
        exactly-once state; sinks are exactly-once or at-least-once by their own options.
        """
        self.config.set(cfg.CHECKPOINTING_INTERVAL.key, interval)
        if mode is not None:
            self.config.set(cfg.CHECKPOINTING_MODE.key, getattr(mode, "name", mode))
        return self

    def get_checkpoint_interval(self) -> int:
        """The checkpoint interval in milliseconds, -1 when checkpointing was not enabled (Flink's answer; kindling then
        runs a micro-batch every second)."""
        return self.get_checkpoint_config().get_checkpoint_interval()

    # --- SQL (kindling.sql) ----------------------------------------------------------------------
    def sql_session(self) -> Any:
        """This environment's Flink SQL session (catalog, SET options), created on first use."""
        if getattr(self, "_sql_session", None) is None:
            from kindling.sql.session import SqlSession

            self._sql_session = SqlSession(self)
        return self._sql_session

    def execute_sql(self, statement: str) -> Any:
        """Run a Flink SQL statement (DDL, SET, INSERT, SELECT, ...) and return its TableResult."""
        return self.sql_session().execute_sql(statement)

    def create_temporary_view(self, name: str, source: Any) -> None:
        """Make a DataStream or Spark DataFrame usable in SQL under ``name`` (Table API tables:
        ``StreamTableEnvironment.create(env).create_temporary_view``)."""
        self.sql_session().create_temporary_view(name, source)

    def create_temporary_function(self, name: str, function: Any) -> None:
        """Make a ``@udf`` Python function callable in SQL under ``name``."""
        self.sql_session().create_temporary_function(name, function)

    # --- sources -------------------------------------------------------------------------------
    def from_source(self, source: Source, watermark_strategy: Optional[WatermarkStrategy] = None, source_name: str = "Source",
                    type_info: Any = None) -> DataStream:
        """A stream from a connector's Source, with event time from the watermark strategy (if any)."""
        rerun.refuse_datastream(f"from_source ({source_name})")
        if not isinstance(source, Source):
            raise TypeError(f"from_source takes a kindling Source (for example KafkaSource.builder()...build()), got {type(source).__name__}")
        assert source.schema is not None
        if type_info is None:
            type_info = getattr(source, "type_info", None)  # a source whose records are PyFlink-typed (NumberSequenceSource)
        strategy = watermark_strategy or WatermarkStrategy.no_watermarks()
        if self.is_batch() and source.bounded and not strategy.has_watermarks:
            # Batch mode: the end of a bounded input is a watermark at the end of time, so keyed operations
            # (rolling aggregations, timers) emit their final results then; records carry no time of their own.
            strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(F.lit(0).cast(LongType()))
        df = self.source_frame(source, strategy, lambda loaded: self._event_time_column(loaded, strategy, type_info))
        df = df.drop(EOS_COLUMN)
        stream = DataStream(self, df, name=source_name, event_time=strategy.has_watermarks, bounded=source.bounded, type_info=type_info)
        # assign_timestamps_and_watermarks on this stream plans the source again with the strategy: the
        # watermark must be set where the end-of-input marker still flows (see _apply_event_time).
        stream._replan = lambda new_strategy: self.from_source(source, new_strategy, source_name, type_info)
        return stream

    def source_frame(self, source: Source, strategy: WatermarkStrategy,
                     event_time: Callable[[DataFrame], Column]) -> DataFrame:
        """A source's rows as Spark reads them, with the end-of-input marker column still in place but its row gone.

        With a watermark strategy, ``event_time`` gives the rows' event time (a TIMESTAMP expression over the loaded
        frame); the marker's row passes the watermark as the end of time and stops right after it. The SQL planner
        calls this directly: it projects the table's columns next, which drops the marker column with no step of its
        own (each step of a frame is one more Spark analysis).
        """
        self._job_sources.append(source)
        df = (
            self.spark.readStream.format(spark_format(source.connector))
            .schema(source.read_schema())
            .options(**source.options)
            .options(**_split_event_time_options(source, strategy))
            .load()
        )
        if strategy.has_watermarks:
            return self._apply_event_time(df, source, strategy, event_time(df))
        return df.where(F.expr(_WITHOUT_MARKER)).withColumn(ROWTIME, F.lit(None).cast(TimestampType()))

    def add_source(self, source_func: Any, source_name: str = "Custom Source", type_info: Any = None) -> DataStream:
        """A stream from a legacy SourceFunction (PyFlink's ``add_source``): ``FlinkKinesisConsumer``.

        The consumer becomes the Kinesis connector's source, one per stream it reads (unioned), so it
        reads as ``from_source`` does. ``type_info`` may repeat the deserializer's type; another type
        is refused (the records are decoded as the deserializer says). Any other SourceFunction wraps
        Java in PyFlink and is refused, naming it and the FLIP-27 sources of ``from_source``.

        >>> consumer = FlinkKinesisConsumer("clicks", SimpleStringSchema(),
        ...                                 {"aws.region": "us-east-1", "flink.stream.initpos": "TRIM_HORIZON"})
        >>> lines = env.add_source(consumer, "clicks")
        """
        from kindling.datastream.functions import SourceFunction

        rerun.refuse_datastream(f"add_source ({source_name})")
        if not isinstance(source_func, SourceFunction):
            hint = (" (a kindling Source: use from_source(source, watermark_strategy, source_name))"
                    if isinstance(source_func, Source) else "")
            raise TypeError(f"add_source takes a SourceFunction such as FlinkKinesisConsumer(...), got "
                            f"{type(source_func).__name__}{hint}")
        return self._source_function_stream(source_func, source_name, type_info, None)

    def _source_function_stream(self, function: Any, source_name: str, type_info: Any,
                                strategy: Optional[WatermarkStrategy]) -> DataStream:
        sources = function.as_sources(event_time=strategy is not None and strategy.has_watermarks)
        for source in sources:
            produced = getattr(source, "type_info", None)
            if type_info is not None and produced is not None and type_info != produced:
                raise TypeError(f"add_source: type_info {type_info!r} differs from the type the source's deserializer "
                                f"produces, {produced!r}; leave type_info out (the records are of the deserializer's type)")
        streams = [self.from_source(source, strategy, source_name, type_info) for source in sources]
        stream = streams[0].union(*streams[1:]) if len(streams) > 1 else streams[0]
        stream._name = source_name
        # assign_timestamps_and_watermarks plans the function's sources again, with its event-time options.
        stream._replan = lambda new_strategy: self._source_function_stream(function, source_name, type_info, new_strategy)
        return stream

    def read_bounded(self, source: Source, micro_batches: Optional[list[dict[str, Any]]] = None) -> DataFrame:
        """A bounded source's records as a Spark batch DataFrame (Flink's batch execution mode for SQL).

        The same reader as :meth:`from_source` reads the same records, in one batch; there is no
        watermark: in batch mode, time attributes are ordinary timestamps and every result is final.

        ``micro_batches`` (a reconciliation's input range: each micro-batch's end offset and late-row
        watermark) reads an unbounded source over exactly the records a streaming run read, each row tagged
        with its micro-batch's watermark in ``LATE_WATERMARK_COLUMN``."""
        if not source.bounded and micro_batches is None:
            raise ValueError(f"source '{source.connector}' is unbounded: it cannot be read in batch mode")
        self._job_sources.append(source)
        schema, options = source.read_schema(), dict(source.options)
        if micro_batches is not None:
            schema = StructType(schema.fields + [StructField(LATE_WATERMARK_COLUMN, LongType(), True)])
            options[MICRO_BATCHES_OPTION] = json.dumps(micro_batches)
        df = self.spark.read.format(spark_format(source.connector)).schema(schema).options(**options).load()
        return df.where(F.col(EOS_COLUMN).isNull() | ~F.col(EOS_COLUMN)).drop(EOS_COLUMN)

    def from_collection(self, collection: Sequence[Any], type_info: Any = None, watermark_strategy: Optional[WatermarkStrategy] = None,
                        rows_per_batch: int = 0) -> DataStream:
        """A bounded stream of the given records; ``rows_per_batch`` spreads them over micro-batches.

        ``type_info`` is a schema (StructType or DDL string: kindling's rows) or PyFlink type information
        (``Types.ROW_NAMED(...)``, ``Types.TUPLE(...)``); without it, as in PyFlink, the records are
        Python objects carried pickled (``Types.PICKLED_BYTE_ARRAY()``).
        """
        rerun.refuse_datastream("from_collection")
        _ = self.spark  # parsing a DDL type string needs a session
        if type_info is None or records.is_type_info(type_info):
            from kindling.common.typeinfo import Types

            info = type_info if type_info is not None else Types.PICKLED_BYTE_ARRAY()
            info = _keeping_row_kinds(info, collection)
            rows = [info.to_columns(value, f"from_collection element {i}") for i, value in enumerate(collection)]
            return self.from_source(collection_source(rows, info.record_schema(), rows_per_batch), watermark_strategy,
                                    "Collection Source", info)
        schema = records.as_struct(type_info)
        return self.from_source(collection_source(collection, schema, rows_per_batch), watermark_strategy, "Collection Source")

    def from_sequence(self, start: int, end: int) -> DataStream:
        """The numbers start..end (inclusive) as a bounded stream of LONG records (PyFlink's from_sequence)."""
        from kindling.common.typeinfo import Types

        return self.from_collection(list(range(start, end + 1)), Types.LONG())

    def _apply_event_time(self, df: DataFrame, source: Source, strategy: WatermarkStrategy, timestamp: Column) -> DataFrame:
        message = f"a record of source '{source.connector}' has no event time (the timestamp assigner returned null)"
        missing = F.raise_error(F.lit(message)).cast(TimestampType())
        end_of_time = f"timestamp_millis({int(END_OF_TIME.timestamp() * 1000)})"
        df = df.withColumn(ROWTIME, F.when(F.expr(f"{_EOS} IS NOT NULL AND {_EOS}"), F.expr(end_of_time))
                           .when(timestamp.isNull(), missing).otherwise(timestamp))
        delay = strategy.out_of_orderness
        assert delay is not None
        df = df.withWatermark(ROWTIME, spark_interval(delay))
        # The end-of-input marker must pass the watermark operator and stop right after it. The
        # condition names the event-time column so that Spark does not push it below the watermark.
        return df.where(F.expr(_BEFORE_END_OF_TIME))

    def _event_time_column(self, df: DataFrame, strategy: WatermarkStrategy, type_info: Any = None) -> Column:
        assigner = strategy.timestamp_assigner
        if assigner is None:
            raise ValueError(
                "the watermark strategy has no timestamp assigner: use "
                "WatermarkStrategy.for_bounded_out_of_orderness(...).with_timestamp_assigner('<timestamp field>')"
            )
        if isinstance(assigner, str) and assigner in df.columns:  # a field: its type is in the schema
            return _as_timestamp(F.col("`" + assigner.replace("`", "``") + "`"), df.schema[assigner].dataType)
        if isinstance(assigner, (str, Column)):
            expression = F.col(assigner) if isinstance(assigner, str) else assigner
            try:
                data_type = df.select(expression).schema.fields[0].dataType
            except Exception as exc:
                raise ValueError(f"timestamp assigner {assigner!r} does not name a field of {records.user_columns(df.schema)}: {exc}") from None
            return _as_timestamp(expression, data_type)
        decoder = records.codec(df.schema, type_info)  # the user's fields (not the end-of-input marker's column)
        ship_by_value(assigner)
        udf = F.arrow_udf(records.timestamp_batches(assigner, decoder), LongType(), ArrowUDFType.SCALAR)
        return F.timestamp_millis(udf(F.struct(*decoder.names), F.col(EOS_COLUMN)))

    # --- sinks and execution ------------------------------------------------------------------
    def _add_sink(self, stream: DataStream, sink: Sink) -> DataStreamSink:
        bound = DataStreamSink(stream, sink, len(self._sinks))
        self._sinks.append(bound)
        return bound

    def _job_name(self, job_name: Optional[str]) -> str:
        """The job's name, which places its checkpoints.

        A named job (``execute("name")`` or ``pipeline.name``) resumes from its checkpoint when run again.
        An unnamed job gets a fresh name of its own, so it never resumes (and replays nothing of) an earlier
        run's finished checkpoint; under the job manager, whose restarts must find the job's checkpoint,
        unnamed jobs are numbered in the order the program runs them instead.
        """
        name = job_name or self.config.get(cfg.PIPELINE_NAME)
        if name:
            return name
        if self._stable_job_names():
            self._unnamed_jobs += 1
            return DEFAULT_JOB_NAME if self._unnamed_jobs == 1 else f"{DEFAULT_JOB_NAME}-{self._unnamed_jobs}"
        import uuid

        return f"{DEFAULT_JOB_NAME}-{uuid.uuid4().hex[:12]}"

    def checkpoint_root(self, job_name: str) -> Path:
        """Where a job's checkpoints live: ``<state.checkpoints.dir>/<job name>``."""
        directory = str(self.config.get(cfg.CHECKPOINTS_DIR))
        if directory.startswith("file://"):
            directory = directory[len("file://"):]
        elif "://" in directory:
            raise OptionError(
                f"configuration option 'state.checkpoints.dir' = {directory!r}: kindling keeps a job's checkpoints on a "
                "path its driver reads as files (a local directory, or a mount every Spark worker shares, such as NFS "
                "or an HDFS/S3 FUSE mount), because it reads Spark's offset and commit logs to restore, resume and take "
                "savepoints. Savepoints can go to S3: set 'state.savepoints.dir' = 's3://bucket/prefix' with the s3.* options."
            )
        return Path(directory).expanduser().resolve() / _safe_name(job_name)

    def execute_async(self, job_name: Optional[str] = None) -> JobClient:
        """Start the pipeline's queries and return at once with a JobClient."""
        rerun.refuse_datastream("execute (a DataStream job)")
        if not self._sinks:
            raise ValueError("the pipeline has no sink: call sink_to(...) or print() on a stream before execute()")
        name = self._job_name(job_name)
        root = self.checkpoint_root(name)
        if _has_checkpoint(root) and not self.config.contains("execution.savepoint.path"):
            print(f"kindling: job '{name}' resumes from its earlier checkpoint in {root} "
                  "(give the job another name to start from scratch)", file=sys.stderr, flush=True)
        interval = spark_interval(self.config.get(cfg.CHECKPOINTING_INTERVAL))
        plans = []
        uids = [s.get_uid() for s in self._sinks]
        duplicates = {u for u in uids if uids.count(u) > 1}
        if duplicates:
            raise ValueError(f"two sinks share the uid {sorted(duplicates)[0]!r}; uids must be unique within a job")
        shared = operator_sinks(self._sinks)  # sinks of one operator's main and side outputs share one query
        alone = [b for b in self._sinks if not any(b in group.members for group in shared)]
        sinks = {bound.get_uid(): _sink_columns(bound.stream._df) for bound in alone}
        sinks.update({group.uid: group.tagged for group in shared})
        savepoints.restore_configured(self.config, root, sinks)  # execution.savepoint.path, if set
        for uid, df in sinks.items():
            state_layout.check_and_record(root / uid, name, uid, self._keyed_in(df), self.config.get(cfg.MAX_PARALLELISM))
        for bound in alone:
            plans.append(self._plan(bound, name, root / bound.get_uid(), interval, sinks[bound.get_uid()]))
        for group in shared:
            plans.append(_shared_plan(group, f"{_safe_name(name)}.{group.uid}", root / group.uid, interval))
        self._sinks = []
        try:
            client = JobClient(name, plans, self.config, on_end=self.take_source_cleanups(), checkpoint_root=root, sink_frames=sinks)
        except BaseException as exc:
            for listener in self._listeners:
                listener.on_job_submitted(None, exc)
            raise
        for listener in self._listeners:
            listener.on_job_submitted(client, None)
        return client

    # --- job listeners (Flink's registerJobListener) ---------------------------------------------------
    def register_job_listener(self, job_listener: JobListener) -> None:
        """Tell ``job_listener`` when this environment's jobs are submitted and when they have executed.

        >>> class Announce(JobListener):
        ...     def on_job_submitted(self, job_client, throwable):
        ...         print("started", job_client.get_job_id())
        >>> env.register_job_listener(Announce())  # doctest: +SKIP
        """
        self._listeners.append(job_listener)

    def clear_job_listeners(self) -> None:
        """Forget the listeners registered on this environment (those of the process stay, as Flink's configured ones)."""
        self._listeners = process_listeners()

    def _stable_job_names(self) -> bool:
        return any(listener.stable_job_names for listener in self._listeners)

    def take_source_cleanups(self) -> list[Callable[[], None]]:
        """The end-of-job steps (``Connector.on_job_end``) of the sources read since the last job started."""
        from kindling.connectors import get_connector

        steps = []
        for source in self._job_sources:
            step = get_connector(source.connector).on_job_end
            if step is not None:
                steps.append(functools.partial(step, dict(source.options)))
        self._job_sources = []
        return steps

    def execute(self, job_name: Optional[str] = None, detached: bool = False) -> JobClient:
        """Run the pipeline. Blocking by default: returns when a bounded job finishes; Ctrl-C stops cleanly."""
        fresh = not (job_name or self.config.get(cfg.PIPELINE_NAME)) and not self._stable_job_names()
        if detached:
            return self.execute_async(job_name)
        with interrupts.deferred():  # Ctrl-C while the queries start stops the job once they have
            client = self.execute_async(job_name)
            try:
                client.wait()
            except KeyboardInterrupt:
                client.cancel()
                print(
                    f"kindling: job '{client.job_name}' stopped (Ctrl-C); its checkpoints stay in "
                    f"{self.checkpoint_root(client.job_name)}: run it again to resume where it stopped",
                    file=sys.stderr,
                    flush=True,
                )
            except BaseException as exc:
                for listener in self._listeners:
                    listener.on_job_executed(None, exc)
                raise
        for listener in self._listeners:
            listener.on_job_executed(client, None)
        if fresh and client.get_job_status() == "FINISHED":
            shutil.rmtree(self.checkpoint_root(client.job_name), ignore_errors=True)  # nothing can ever resume it
        return client

    def _keyed_in(self, df: DataFrame) -> list[str]:
        """The names of the keyed operators whose state a sink's query keeps."""
        if not self.keyed_operators:
            return []
        plan = savepoints._plan_text(df)
        return [name for name, bucket in self.keyed_operators if re.search(rf"\b{re.escape(bucket)}\b", plan)]

    def _plan(self, bound: DataStreamSink, job_name: str, checkpoint: Path, interval: str, out: Optional[DataFrame] = None) -> QueryPlan:
        """The query that writes ``bound``'s stream into its sink; ``out``: the stream's sink columns, if already selected."""
        stream, sink = bound.stream, bound.sink
        if out is None:
            out = _sink_columns(stream._df)
        query_name = f"{_safe_name(job_name)}.{bound.get_uid()}"

        from kindling.connectors import get_connector

        spark_sink = get_connector(sink.connector).spark_sink_format

        def start():
            checkpoint.parent.mkdir(parents=True, exist_ok=True)
            if spark_sink is not None:  # a sink Spark writes itself, in any output mode
                return (out.writeStream.format(spark_sink).option("checkpointLocation", str(checkpoint)).queryName(query_name)
                        .outputMode(bound.output_mode).trigger(processingTime=interval).start())
            if bound.output_mode != "append":  # updating SQL results: Python Data Sources take appends only
                from kindling.sql.changelog_sink import start_changelog_query

                return start_changelog_query(out, sink, str(checkpoint), query_name, interval, bound.output_mode)
            return (
                out.writeStream.format(spark_format(sink.connector))
                .options(**sink.options)
                .option("checkpointLocation", str(checkpoint))
                .queryName(query_name)
                .outputMode("append")
                .trigger(processingTime=interval)
                .start()
            )

        return QueryPlan(bound.get_uid(), bound.get_name(), str(checkpoint), separate_exchanges(start, out.sparkSession), stream.is_bounded,
                         stream._event_time, on_finished=_finish_hook(sink, checkpoint), frame=out, contents=_contents_reader(sink, out))

    def _collect(self, stream: DataStream, job_name: Optional[str], limit: Optional[int], timeout: float) -> list[Row]:
        if not stream.is_bounded:
            raise ValueError("execute_and_collect needs a bounded stream (every source must end)")
        batches: dict[int, list[Row]] = {}
        lock = threading.Lock()
        out = _sink_columns(stream._df)
        checkpoint = Path(tempfile.mkdtemp(prefix="kindling-collect-"))

        def collect(batch: DataFrame, batch_id: int) -> None:
            rows = batch.collect()
            with lock:
                batches[batch_id] = rows  # a replayed batch replaces its earlier rows

        def start():
            return (
                out.writeStream.foreachBatch(collect)
                .option("checkpointLocation", str(checkpoint / "collect"))
                .queryName(f"{_safe_name(self._job_name(job_name))}.collect.{os.getpid()}.{id(out)}")
                .outputMode("append")
                .trigger(processingTime=spark_interval(self.config.get(cfg.CHECKPOINTING_INTERVAL)))
                .start()
            )

        client = JobClient(
            self._job_name(job_name),
            [QueryPlan("collect", "Collect Sink", str(checkpoint), separate_exchanges(start, out.sparkSession), True, stream._event_time,
                       frame=out)],
            self.config, on_end=self.take_source_cleanups(),
        )
        try:
            status = client.wait(timeout=timeout)
            if status not in ("FINISHED",):
                client.cancel()
                raise TimeoutError(f"execute_and_collect: the job did not finish within {timeout:.0f} s")
        finally:
            retire(checkpoint)  # later: Spark may still write the last state snapshot there
        rows = [row for batch_id in sorted(batches) for row in batches[batch_id]]
        rows = rows[:limit] if limit is not None else rows
        if stream._type_info is None:
            return rows  # kindling's own streams: Spark Rows of their fields
        # a PyFlink-typed stream's records, as PyFlink gives them back (a str, a tuple, a Row of its kind, ...)
        decoder = records.codec(out.schema, stream._type_info)
        return [decoder.decode([row[name] for name in decoder.names]) for row in rows]


# PyFlink's name for the same thing.
StreamExecutionEnvironment = StreamEnvironment


def _keeping_row_kinds(info: Any, collection: Sequence[Any]) -> Any:
    """Rows of a kind other than +I typed ``Types.ROW``: their kinds travel with them, as in PyFlink (a changelog)."""
    from kindling.common.row import Row, RowKind
    from kindling.common.typeinfo import ChangelogRowTypeInfo, RowTypeInfo

    if type(info) is RowTypeInfo and any(isinstance(v, Row) and v.get_row_kind() is not RowKind.INSERT for v in collection):
        return ChangelogRowTypeInfo(info.field_types, info.field_names)
    return info


def _has_checkpoint(root: Path) -> bool:
    """Whether a job's checkpoint directory holds a committed micro-batch of any of its sinks."""
    return root.is_dir() and any(any((sink / "commits").glob("[0-9]*")) for sink in root.iterdir() if sink.is_dir())


def _split_event_time_options(source: Source, strategy: WatermarkStrategy) -> dict[str, str]:
    """What a source that tracks event time per split (Kafka, Kinesis) needs from the watermark strategy:
    the rowtime column, and the idleness and alignment settings, in the connector's own options."""
    from kindling.connectors import get_connector

    if not strategy.has_watermarks:
        return {}
    rowtime = strategy.timestamp_assigner if isinstance(strategy.timestamp_assigner, str) else None
    alignment = strategy.alignment
    options = get_connector(source.connector).split_event_time_options(
        rowtime,
        to_millis(strategy.idleness) if strategy.idleness is not None else None,
        (alignment.group, to_millis(alignment.max_drift), to_millis(alignment.update_interval)) if alignment is not None else None,
    )
    return {k: v for k, v in options.items() if k not in source.options}


def _shared_plan(group: OperatorSinks, query_name: str, checkpoint: Path, interval: str) -> QueryPlan:
    def start():
        checkpoint.parent.mkdir(parents=True, exist_ok=True)
        return group.start(str(checkpoint), query_name, interval)

    return QueryPlan(group.uid, group.name, str(checkpoint), start, group.bounded, group.event_time,
                     on_finished=group.on_finished(checkpoint), frame=group.tagged)


def _finish_hook(sink: Sink, checkpoint: Path):
    """A sink connector's end-of-input step (``on_bounded_finish``), e.g. the file sink publishing what is pending."""
    from kindling.connectors import get_connector

    finish = get_connector(sink.connector).on_bounded_finish
    if finish is None:
        return None
    return lambda: finish(sink.options, str(checkpoint))


def _contents_reader(sink: Sink, out: DataFrame) -> Callable[[int], Any]:
    """Reads what the sink's external system holds now (``Connector.sink_contents``), for the dashboard."""
    from kindling.connectors import get_connector

    connector = get_connector(sink.connector)
    columns = [c for c in out.columns if not c.startswith(INTERNAL_PREFIX)]
    return lambda limit: connector.sink_contents(sink.options, columns, limit)


def _sink_columns(df: DataFrame) -> DataFrame:
    """What a sink receives: the record's fields, plus the row kind of an updating stream."""
    kept = [c for c in df.columns if not c.startswith(INTERNAL_PREFIX) or c == ROWKIND_COLUMN]
    return df if len(kept) == len(df.columns) else df.select(*kept)


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or DEFAULT_JOB_NAME


def _as_timestamp(expression: Column, data_type: DataType) -> Column:
    if isinstance(data_type, TimestampType):
        return expression
    if isinstance(data_type, (TimestampNTZType, DateType)):
        return expression.cast(TimestampType())
    if isinstance(data_type, NumericType):
        return F.timestamp_millis(expression.cast(LongType()))
    if isinstance(data_type, StringType):
        return F.to_timestamp(expression)
    raise ValueError(f"the event-time field must be TIMESTAMP, BIGINT epoch milliseconds or a timestamp string, not {data_type.simpleString()}")
