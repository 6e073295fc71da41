"""A Flink SQL session on Spark (Flink's TableEnvironment): catalog, options, and statement execution.

Every statement that reads tables registers them as Spark temporary views built afresh from the
catalog (so each job gets its own source instances): a table becomes a connector's streaming
DataFrame with its computed columns and, if it declares a WATERMARK, kindling's event time
(``StreamEnvironment.from_source``) under the user's column name. Queries are rewritten by
:mod:`kindling.sql.translate` and planned by Spark. Spark's own streaming checks decide the
output mode: a query Spark can run in append mode is append-only (``+I``); one it can only run in
update mode (an unbounded GROUP BY) is an upsert changelog keyed by its grouping columns.
"""

from __future__ import annotations

import functools
import importlib
import itertools
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence, Union

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import StructField, StructType, TimestampNTZType, TimestampType

from kindling import config as cfg
from kindling.connectors import get_connector
from kindling.connectors.base import INTERNAL_PREFIX, ROWKIND_COLUMN, TABLE_SCAN, Sink, Source
from kindling.connectors.watermark_use import new_scan_id
from kindling.datastream.functions import ship_by_value
from kindling.datastream.stream import ROWTIME, DataStream, DataStreamSink
from kindling.datastream.watermarks import WatermarkStrategy
from kindling.durations import parse_duration, spark_interval
from kindling.options import OptionError, nearest
from kindling.row_layout import LATE_WATERMARK_COLUMN
from kindling.runtime import rerun
from kindling.runtime.batch_job import BatchJob
from kindling.runtime.job import JobClient, QueryPlan, running_jobs, separate_exchanges
from kindling.runtime.scratch import retire
from kindling.sql import ddl, pushdown
from kindling.sql.aggregate_functions import UserDefinedAggregateFunction
from kindling.sql.aggregates import with_flink_aggregate_types
from kindling.sql.analysis import spark_sql
from kindling.sql.builtin_functions import listed_functions
from kindling.sql.catalog import DESCRIBE_COLUMNS, Catalog, CatalogTable, CatalogView, check_rowtime_type, describe_rows
from kindling.sql.changelog_functions import TO_CHANGELOG, ChangelogCall, find_changelog_call, from_changelog, to_changelog
from kindling.sql.column_types import (
    carried_type,
    known_types,
    result_columns,
    shared_type,
    time_columns,
    window_property_types,
    with_type,
)
from kindling.sql.declared_types import with_declared_types
from kindling.sql.division import with_flink_division
from kindling.sql.errors import SqlError, from_spark
from kindling.sql.functions import UserDefinedScalarFunction, UserDefinedTableFunction
from kindling.sql.group_aggregate import SUPPORTED_FORM as GROUP_AGGREGATION_FORM
from kindling.sql.group_aggregate import (
    GroupAggregation,
    Projection,
    aggregate_frame,
    batch_aggregate_frame,
    find_group_aggregation,
    find_projection,
    output_name,
)
from kindling.sql.group_window import group_window_as_tvf
from kindling.sql.grouping_sets import GroupingSets, find_grouping_sets
from kindling.sql.json_text import left_untyped, with_flink_json_strings
from kindling.sql.lookup_join import register_lookup_join
from kindling.sql.match_recognize import (
    MatchRecognize,
    batch_match_frame,
    compile_match,
    find_match_recognize,
    find_nested_match_recognize,
    match_frame,
)
from kindling.sql.object_identifier import ObjectIdentifier
from kindling.sql.outer_join import OuterJoin, find_outer_join, outer_join_frame
from kindling.sql.over_aggregate import OverAggregation, find_over_aggregation, over_frame
from kindling.sql.ranking import (
    TOP_N_FORM,
    RankPlan,
    TopN,
    find_top_n,
    plan_ranking,
    rank_frame,
    ranking_upsert_key,
    sort_limit_as_top_n,
    top_one_aggregate,
)
from kindling.sql.result import BatchCollector, ChangelogCollector, TableResult
from kindling.sql.rounding import with_flink_rounding
from kindling.sql.select_names import flink_column_names, name_unaliased_columns
from kindling.sql.semi_join import SemiJoin, anti_join_frame, find_semi_join, semi_join_frame
from kindling.sql.session_tvf import rewrite_session_tvfs
from kindling.sql.set_operation import find_set_operation, find_union_all
from kindling.sql.statements import Statement, split_statements
from kindling.sql.temporal_join import CONSTRUCT as TEMPORAL_JOIN
from kindling.sql.temporal_join import TIME as TEMPORAL_TIME
from kindling.sql.temporal_join import check_versioned, temporal_join_frame, versioned
from kindling.sql.temporal_sort import find_temporal_sort, sort_frame
from kindling.sql.tokens import Token, function_calls, render, significant, split_alias, split_top_level, tokenize, with_depth
from kindling.sql.translate import WindowTvf, translate_expression, translate_query, watermark_delay
from kindling.sql.typeof import left_pending, with_flink_typeof
from kindling.sql.types import flink_type_name

if TYPE_CHECKING:
    from kindling.env import StreamEnvironment

# SQL-session options kindling understands besides the job configuration keys.
SESSION_OPTIONS = {
    "table.dml-sync": "false",
    "sql-client.execution.result-mode": "tableau",
    "table.exec.state.ttl": "0",
    "table.local-time-zone": "UTC",
    "table.exec.source.idle-timeout": "0",
    "table.exec.mini-batch.enabled": "false",
    "table.exec.mini-batch.allow-latency": "0",
    "table.exec.mini-batch.size": "-1",
    "table.optimizer.agg-phase-strategy": "AUTO",
    "table.exec.sink.not-null-enforcer": "ERROR",
    "sql-client.verbose": "false",
}
_TVF_WINDOW = "__kindling_window"
# Batch mode marks a window TVF's window_end column (Spark keeps column metadata through GROUP BY keys).
WINDOW_END_METADATA = "kindling.windowEnd"
_UPDATING_TOP_N = "__kindling_updating_top_n"  # marks a plan that contains an updating Top-N
_VIEW_IDS = itertools.count(1)


def _window_time(window_end: Column) -> Column:
    """A window TVF's window_time: Flink's ``window_end - 1 ms`` (a TIMESTAMP(3)); Spark's own is end - 1 µs."""
    return window_end - F.expr("INTERVAL 1 MILLISECOND")


def _quiet_spark_error_logs() -> None:
    """PySpark logs every failed analysis with its JVM trace; kindling reports those errors itself."""
    try:
        from pyspark.logger import PySparkLogger

        for name in ("SQLQueryContextLogger", "DataFrameQueryContextLogger"):
            PySparkLogger.getLogger(name).disabled = True
    except Exception:  # older PySpark without the logger: nothing to silence
        pass


@dataclass
class _Source:
    """A query's single FROM subquery or view, planned: its frame and the text it was planned from."""

    df: DataFrame
    flags: tuple[bool, bool]  # bounded, event time
    text: str
    line: int
    column_names: list[str] = field(default_factory=list)  # a view's declared column names
    stack: tuple[str, ...] = ()  # the views being expanded, for planning the text again


def read_nothing(table: CatalogTable) -> list[dict[str, Any]]:
    """A reconciliation's input range before the query it re-runs is known: no micro-batch of any table."""
    return []


@dataclass
class PlannedQuery:
    """A query planned on Spark: its DataFrame, output mode and what kindling knows about its time."""

    df: DataFrame
    mode: str  # append | update
    upsert_key: Optional[list[str]]
    bounded: bool
    event_time: bool
    columns: list[str] = field(default_factory=list)
    changelog: bool = False  # rows carry ROWKIND_COLUMN although Spark runs the query in append mode (Top-N)
    window_end: Optional[str] = None  # batch mode: the output column holding a window TVF's window_end, if any

    @property
    def updating(self) -> bool:
        return self.mode != "append" or self.changelog


class SqlSession:
    """Runs Flink SQL statements against one StreamEnvironment."""

    def __init__(self, env: "StreamEnvironment") -> None:
        self.env = env
        self.catalog = Catalog()
        self.session_options: dict[str, str] = {}
        self._initial_config = env.config.copy()  # what RESET returns to (the environment's own settings, -D options)
        self._statement_set: Optional[list[ddl.Insert]] = None
        self._scans_read_needs = False  # a table read by the query being planned uses kindling.sql.pushdown
        self._operator_views: dict[str, tuple[bool, bool]] = {}  # a keyed operator's rows as a view: its input's flags
        self._mode_checker_of: Optional[tuple[Any, Any, Any, Any]] = None  # (the JVM, what _mode_checker gives)
        self._changelog_views: dict[str, bool] = {}  # per table or view as last registered: whether its rows are a changelog
        self._changes_per_record = False  # aggregations planned now emit a change per row (TO_CHANGELOG reads them)
        self._statement_set_line = 0
        self.jobs: list[Any] = []  # the jobs this session started that had not ended when the last one started
        self._spark_functions: dict[str, str] = {}  # user functions registered under another name than their own
        self._builtins: Optional[set[str]] = None
        # A reconciliation's batch re-run of a streaming job (kindling.reconciliation): the micro-batches a table's
        # source read in that run (None: read the table whole), and the rows its window TVFs dropped as late.
        self.input_ranges: Optional[Callable[[CatalogTable], Optional[list[dict[str, Any]]]]] = None
        if rerun.active() is not None:
            self.input_ranges = read_nothing  # what the program plans before its INSERT reads nothing yet
        self.late_rows: list[tuple[str, DataFrame, DataFrame]] = []  # (operator, late rows, cached input)
        self.behind_watermark: list[tuple[str, DataFrame]] = []  # (table, its rows read behind the late-row watermark)
        _quiet_spark_error_logs()

    @property
    def spark(self):
        return self.env.spark

    @property
    def batch(self) -> bool:
        """Flink's batch execution mode (``SET 'execution.runtime-mode' = 'batch'``, ``in_batch_mode()``)."""
        return self.env.is_batch()

    # --- entry points -------------------------------------------------------------------------
    def execute_script(self, script: str) -> list[TableResult]:
        return [self.execute_statement(statement) for statement in split_statements(script)]

    def execute_sql(self, text: str) -> TableResult:
        """Execute one statement (or several; the last one's result is returned)."""
        results = self.execute_script(text)
        if not results:
            raise SqlError("no statement to execute", line=1, construct="statement")
        return results[-1]

    def execute_statement(self, statement: Statement) -> TableResult:
        parsed = ddl.parse_statement(statement)
        if self._statement_set is not None and not isinstance(parsed, (ddl.Insert, ddl.EndStatementSet)):
            raise SqlError("only INSERT statements may appear between BEGIN STATEMENT SET and END", line=statement.line,
                           construct="BEGIN STATEMENT SET", hint="BEGIN STATEMENT SET; INSERT INTO ...; INSERT INTO ...; END;")
        handler = getattr(self, "_do_" + type(parsed).__name__)
        return handler(parsed)

    # --- DDL ----------------------------------------------------------------------------------
    def _do_CreateTable(self, statement: ddl.CreateTable) -> TableResult:
        if self.catalog.create_table(statement):
            table = self.catalog.objects[statement.name]
            assert isinstance(table, CatalogTable)
            self._check_connector(table)
        return TableResult.ok()

    def _check_connector(self, table: CatalogTable) -> None:
        """Fail at CREATE TABLE for an unknown connector, as Flink's client does at first use."""
        from kindling.connectors import get_connector

        try:
            get_connector(table.connector)
        except OptionError as exc:
            del self.catalog.objects[table.name]
            raise SqlError(f"table '{table.name}': {exc}", line=table.line, construct="WITH 'connector'") from None

    def _do_CreateView(self, statement: ddl.CreateView) -> TableResult:
        if statement.name in self.catalog and statement.if_not_exists:
            return TableResult.ok()
        # Plan it once so that a broken view fails here, at its own line.
        self.catalog.create_view(statement)
        try:
            self._plan(statement.query, statement.query_line, construct=f"CREATE VIEW {statement.name}")
        except SqlError:
            del self.catalog.objects[statement.name]
            raise
        return TableResult.ok()

    def _do_CreateFunction(self, statement: ddl.CreateFunction) -> TableResult:
        if statement.name in self.catalog.functions and statement.if_not_exists:
            return TableResult.ok()
        module_name, _, attribute = statement.target.rpartition(".")
        try:
            module = importlib.import_module(module_name)
            function = getattr(module, attribute)
        except (ImportError, AttributeError) as exc:
            raise SqlError(f"function '{statement.name}': cannot import '{statement.target}' ({exc})", line=statement.line,
                           construct="CREATE FUNCTION", hint="a module on PYTHONPATH defining @udf(result_type=...) def function(...)") from None
        self.create_temporary_function(statement.name, function, line=statement.line)
        return TableResult.ok()

    def _do_Drop(self, statement: ddl.Drop) -> TableResult:
        self.catalog.drop(statement.kind, statement.name, statement.if_exists, statement.line, statement.temporary)
        if statement.name not in self.catalog.functions:
            self._spark_functions.pop(statement.name.lower(), None)
        return TableResult.ok()

    def _do_SetOption(self, statement: ddl.SetOption) -> TableResult:
        if statement.key is None:
            merged = {**self.env.config.to_dict(), **self.session_options}
            return TableResult(["key", "value"], sorted(merged.items()))
        key, value = statement.key, statement.value or ""
        if key in SESSION_OPTIONS or key.startswith(("table.", "sql-client.")):
            if key not in SESSION_OPTIONS:
                hint = nearest(key, SESSION_OPTIONS)
                raise SqlError(f"SET: unknown option '{key}'" + (f"; did you mean '{hint}'?" if hint else ""), line=statement.line,
                               construct="SET", hint="SET 'key' = 'value' with one of " + ", ".join(sorted(SESSION_OPTIONS)))
            self.session_options[key] = value
            return TableResult.ok()
        try:
            self.env.config.set(key, value)
        except OptionError as exc:
            raise SqlError(f"SET: {exc}", line=statement.line, construct="SET", hint="SET 'key' = 'value'") from None
        return TableResult.ok()

    def _do_ResetOption(self, statement: ddl.ResetOption) -> TableResult:
        if statement.key is None:
            self.session_options.clear()
            self.env.config = self._initial_config.copy()
            return TableResult.ok()
        self.session_options.pop(statement.key, None)
        values = {k: v for k, v in self.env.config.to_dict().items() if k != statement.key}
        initial = self._initial_config.to_dict()
        if statement.key in initial:
            values[statement.key] = initial[statement.key]
        self.env.config = type(self.env.config)(values)
        return TableResult.ok()

    def _do_Show(self, statement: ddl.Show) -> TableResult:
        if statement.what == "TABLES":
            return TableResult(["table name"], [(n,) for n in self.catalog.tables()])
        if statement.what == "VIEWS":
            return TableResult(["view name"], [(n,) for n in self.catalog.views()])
        # Flink: SHOW FUNCTIONS lists the built-in functions and the user's (as list_functions()), SHOW USER FUNCTIONS
        # the user's, in lower case as its catalog keeps them
        names = self.user_function_names() if statement.user else listed_functions(self.user_function_names())
        return TableResult(["function name"], [(n,) for n in names])

    def user_function_names(self) -> list[str]:
        """The user-defined functions registered here, in lower case as Flink's catalog keeps them, sorted; not the
        functions kindling registers for itself (a Table API ``@udf`` called inline)."""
        return sorted({n.lower() for n in self.catalog.functions if not n.startswith("__kindling_")})

    def _do_Describe(self, statement: ddl.Describe) -> TableResult:
        obj = self.catalog.get(statement.name, line=statement.line, construct="DESCRIBE")
        types = None
        if isinstance(obj, CatalogView) or any(c.kind == "computed" for c in obj.columns):
            types = self._describe_types(obj, statement.line)
        try:
            return TableResult(DESCRIBE_COLUMNS, describe_rows(obj, types, streaming=not self.batch))
        except SqlError as exc:
            raise SqlError(exc.reason, line=statement.line, construct=exc.construct, hint=exc.hint) from None

    def _describe_types(self, obj: Union[CatalogTable, CatalogView], line: int) -> Optional[dict[str, Optional[str]]]:
        """The Flink types of the planned view's or table's columns, by name (a table whose source cannot be planned
        here: None, its declared types are described)."""
        try:
            registered: dict[str, tuple[bool, bool]] = {}
            self._register(obj.name, registered, line)
            df = self.spark.table(_spark_name(obj.name))
        except SqlError:
            if isinstance(obj, CatalogView):
                raise
            return None
        return {f.name: t for f, t in zip(df.schema.fields, known_types(df)) if not f.name.startswith(INTERNAL_PREFIX)}

    # --- DML ----------------------------------------------------------------------------------
    def _do_Query(self, statement: ddl.Query) -> TableResult:
        planned = self._plan(statement.text, statement.line, construct="SELECT")
        return self._collect(planned)

    def _do_Insert(self, statement: ddl.Insert) -> TableResult:
        if self._statement_set is not None:
            self._statement_set.append(statement)
            return TableResult.ok()
        return self._run_inserts([statement], statement.line)

    def _do_StatementSet(self, statement: ddl.StatementSet) -> TableResult:
        return self._run_inserts(statement.inserts, statement.line)

    def _do_BeginStatementSet(self, statement: ddl.BeginStatementSet) -> TableResult:
        self._statement_set = []
        self._statement_set_line = statement.line
        return TableResult.ok()

    def _do_EndStatementSet(self, statement: ddl.EndStatementSet) -> TableResult:
        if self._statement_set is None:
            raise SqlError("END without BEGIN STATEMENT SET", line=statement.line, construct="END",
                           hint="BEGIN STATEMENT SET; INSERT INTO ...; END;")
        inserts, self._statement_set = self._statement_set, None
        if not inserts:
            raise SqlError("the statement set is empty", line=statement.line, construct="END")
        return self._run_inserts(inserts, self._statement_set_line)

    def _do_Explain(self, statement: ddl.Explain) -> TableResult:
        inner = statement.statement
        inserts = [inner] if isinstance(inner, ddl.Insert) else inner.inserts if isinstance(inner, ddl.StatementSet) else []
        sections: list[str] = []
        if isinstance(inner, ddl.Query):
            planned = self._plan(inner.text, inner.line, construct="EXPLAIN")
            sections.append(self._explain_text(planned, None))
        for insert in inserts:
            planned, table = self._plan_insert(insert)
            sections.append(self._explain_text(planned, table))
        return TableResult(["result"], [("\n\n".join(sections),)])

    def _explain_text(self, planned: PlannedQuery, table: Optional[CatalogTable]) -> str:
        plan = planned.df._jdf.queryExecution().toString()
        target = f"Sink: {table.name} (connector '{table.connector}')" if table is not None else "Collect (SELECT)"
        changelog = ("[+I]" if not planned.updating else "[+I, -U, +U, -D]" if planned.changelog
                     else "[+I, +U]" + (f" upsert key {planned.upsert_key}" if planned.upsert_key else ""))
        return (f"== {target} ==\nSpark output mode: {planned.mode}; changelog mode: {changelog}; "
                f"bounded: {str(planned.bounded).lower()}\n\n{plan}")

    # --- running ------------------------------------------------------------------------------
    def _track(self, job: Union[JobClient, BatchJob]) -> None:
        """Keep ``job`` among the session's jobs (the SQL client waits for them), forgetting those that ended."""
        running = running_jobs()
        self.jobs = [other for other in self.jobs if any(other is r for r in running)] + [job]

    def _job_name(self, default: str) -> str:
        return self.env.config.get(cfg.PIPELINE_NAME) or default

    def _insert_result(self, inserts: Sequence[ddl.Insert], job: Any) -> TableResult:
        """Flink's result of INSERTs: a BIGINT column named for each sink (``default_catalog.default_database.t``), one
        row of -1 (the affected rows, unknown), printed as the raw values; the job through ``get_job_client()``."""
        names = [ObjectIdentifier.in_default_database(self.catalog.table(i.table, line=i.line).name).as_summary_string()
                 for i in inserts]
        return TableResult(names, [tuple(-1 for _ in names)], job_client=job, flink_types=["BIGINT"] * len(names), raw=True)

    def _run_inserts(self, inserts: Sequence[ddl.Insert], line: int) -> TableResult:
        if (active := rerun.active()) is not None:  # a reconciliation's re-run: the INSERTs are handed over, not run
            job_name = self._job_name("insert-into_" + ",".join(self.catalog.table(i.table, line=i.line).name for i in inserts))
            active.take(self, list(inserts), job_name)
            job = BatchJob(job_name, lambda _job: None, self.spark)
            job.wait()
            return self._insert_result(inserts, job)
        if self.batch:
            return self._run_inserts_batch(inserts, line)
        bindings: list[DataStreamSink] = []
        names = []
        pending = self.env._sinks
        self.env._sinks = []
        try:
            for index, insert in enumerate(inserts):
                planned, table = self._plan_insert(insert)
                if not planned.df.isStreaming:  # INSERT INTO t VALUES (...): a bounded job, run as batch mode runs it
                    if all(not self._plan_insert(other)[0].df.isStreaming for other in inserts):
                        return self._run_inserts_batch(inserts, line)
                    raise SqlError(f"INSERT INTO {table.name} reads no table (VALUES or literals) and cannot run in one statement set "
                                   "with streaming INSERTs", line=insert.line, construct="STATEMENT SET",
                                   hint="run the INSERT ... VALUES as a statement of its own")
                stream = DataStream(self.env, planned.df, name=f"INSERT INTO {table.name}", event_time=planned.event_time,
                                    bounded=planned.bounded)
                try:
                    sink = Sink(table.connector, table.connector_options())
                    get_connector(table.connector).prepare_sink(sink.options, planned.df.schema, planned.updating)
                except (OptionError, ValueError) as exc:
                    raise SqlError(f"INSERT INTO {table.name}: {exc}", line=insert.line, construct="WITH options of the sink table") from None
                bound = self.env._add_sink(stream, sink)
                bound.output_mode = planned.mode
                uid = f"{index}-{table.name}" if len(inserts) > 1 else table.name
                bound.uid(_safe_uid(uid)).name(f"Sink: {table.name}")
                bindings.append(bound)
                names.append(table.name)
            job_name = self._job_name("insert-into_" + ",".join(names))
            try:
                client = self.env.execute_async(job_name)
            except Exception as exc:
                if isinstance(exc, SqlError):
                    raise
                raise from_spark(exc, statement_line=line, construct="INSERT") from None
        finally:
            self.env._sinks = pending
        self._track(client)
        result = self._insert_result(inserts, client)
        if self.session_options.get("table.dml-sync", "false").lower() == "true":
            result.wait()
        return result

    def _collect(self, planned: PlannedQuery) -> TableResult:
        if self.batch or not planned.df.isStreaming:
            return self._collect_batch(planned)
        collector = ChangelogCollector(planned.columns)
        checkpoint = Path(tempfile.mkdtemp(prefix="kindling-select-"))
        out = planned.df
        interval = spark_interval(self.env.config.get(cfg.CHECKPOINTING_INTERVAL))
        name = f"select-{next(_VIEW_IDS)}"

        def start():
            return (out.writeStream.foreachBatch(collector).option("checkpointLocation", str(checkpoint / "collect"))
                    .queryName(f"kindling.{name}.{id(collector)}").outputMode(planned.mode).trigger(processingTime=interval).start())

        try:
            # Self-joins of one view (Nexmark q5) plan the same shuffle twice; a reused one gets no watermark.
            client = JobClient(self._job_name(name), [QueryPlan("collect", "Collect Sink", str(checkpoint),
                                                                separate_exchanges(start, out.sparkSession), planned.bounded,
                                                                planned.event_time, frame=out)], self.env.config,
                               on_end=self.env.take_source_cleanups())
        except Exception as exc:
            shutil.rmtree(checkpoint, ignore_errors=True)
            raise from_spark(exc, statement_line=1, construct="SELECT") from None
        self._track(client)
        types = [planned.df.schema[c].dataType if c in planned.df.columns else None for c in planned.columns]
        return TableResult(planned.columns, job_client=client, collector=collector, upsert_key=planned.upsert_key,
                           cleanup=lambda: retire(checkpoint), column_types=types, flink_types=lambda: _result_types(planned),
                           time_columns=lambda: time_columns(planned.df, planned.columns))

    def _collect_batch(self, planned: PlannedQuery) -> TableResult:
        """A SELECT in batch mode: one Spark batch job whose rows are the final result, in the query's order."""
        df = planned.df
        job = BatchJob(self._job_name(f"select-{next(_VIEW_IDS)}"), lambda _job: df.collect(), self.spark)
        self._track(job)
        types = [df.schema[c].dataType for c in planned.columns]
        return TableResult(planned.columns, job_client=job, collector=BatchCollector(job), column_types=types,
                           flink_types=lambda: _result_types(planned), row_kinds=not self.batch,
                           time_columns=lambda: time_columns(planned.df, planned.columns))

    def _run_inserts_batch(self, inserts: Sequence[ddl.Insert], line: int) -> TableResult:
        """INSERTs in batch mode: the queries run as Spark batch jobs into staged files, then the sinks write
        the staged rows through the same exactly-once path as a bounded streaming job (one job, one checkpoint
        of its own: a batch job never resumes an earlier run)."""
        staged: list[tuple[DataFrame, Path, DataStreamSink]] = []
        root = Path(tempfile.mkdtemp(prefix="kindling-batch-"))
        pending = self.env._sinks
        self.env._sinks = []
        try:
            names = []
            for index, insert in enumerate(inserts):
                planned, table = self._plan_insert(insert)
                try:
                    sink = Sink(table.connector, table.connector_options())
                    get_connector(table.connector).prepare_sink(sink.options, planned.df.schema, False)
                except (OptionError, ValueError) as exc:
                    raise SqlError(f"INSERT INTO {table.name}: {exc}", line=insert.line, construct="WITH options of the sink table") from None
                directory = root / f"stage-{index}"
                source = Source("filesystem", {"path": str(directory), "format": "parquet"}, planned.df.schema)
                stream = self.env.from_source(source, None, f"INSERT INTO {table.name}")
                bound = DataStreamSink(stream, sink, index)
                bound.uid(_safe_uid(f"{index}-{table.name}" if len(inserts) > 1 else table.name)).name(f"Sink: {table.name}")
                staged.append((planned.df, directory, bound))
                names.append(table.name)
            job_name = self._job_name("insert-into_" + ",".join(names))
            interval = spark_interval(self.env.config.get(cfg.CHECKPOINTING_INTERVAL))
            plans = [self.env._plan(bound, job_name, root / "checkpoints" / bound.get_uid(), interval) for _, _, bound in staged]
        except BaseException:
            shutil.rmtree(root, ignore_errors=True)
            raise
        finally:
            self.env._sinks = pending
        cleanups = self.env.take_source_cleanups()
        config = self.env.config

        def run(job: BatchJob) -> None:
            try:
                for df, directory, _ in staged:
                    df.write.parquet(str(directory))
                writing = JobClient(job_name, plans, config)
                job.on_cancel(writing.cancel)
                writing.wait()
            finally:
                for step in cleanups:
                    step()
                shutil.rmtree(root, ignore_errors=True)

        try:
            job = BatchJob(job_name, run, self.spark)
        except Exception as exc:
            raise from_spark(exc, statement_line=line, construct="INSERT") from None
        self._track(job)
        result = self._insert_result(inserts, job)
        if self.session_options.get("table.dml-sync", "false").lower() == "true":
            result.wait()
        return result

    # --- planning -----------------------------------------------------------------------------
    def _plan_insert(self, insert: ddl.Insert) -> tuple[PlannedQuery, CatalogTable]:
        table = self.catalog.table(insert.table, line=insert.line, construct="INSERT")
        # A changelog format writes each change as an envelope: an update must reach it as -U and +U (Flink's retract
        # changelog), not as Spark's update mode's upsert of the new value alone.
        retractions = get_connector(table.connector).needs_retractions(table.connector_options())
        planned = self._plan(insert.query, insert.query_line, construct=f"INSERT INTO {insert.table}", retractions=retractions)
        targets = table.sink_columns()
        target_names = [c.name for c in targets]
        if insert.columns:
            unknown = [c for c in insert.columns if c not in target_names]
            if unknown:
                raise SqlError(f"INSERT INTO {table.name}: column '{unknown[0]}' is not a writable column of the table", line=insert.line,
                               construct="INSERT", hint=f"columns: {', '.join(target_names)}")
            chosen = insert.columns
        else:
            chosen = target_names
        if len(planned.columns) != len(chosen):
            raise SqlError(f"INSERT INTO {table.name}: the query produces {len(planned.columns)} columns "
                           f"({', '.join(planned.columns)}) but the table takes {len(chosen)} ({', '.join(chosen)})",
                           line=insert.line, construct="INSERT", hint="as many query columns as table columns, in table order")
        source = dict(zip(chosen, planned.columns))
        schema = planned.df.schema
        if planned.updating and not get_connector(table.connector).consumes_updates(table.connector_options()):
            raise SqlError(f"table sink '{table.name}' (connector '{table.connector}') doesn't support consuming update changes, "
                           "which this query produces (an unbounded GROUP BY, DISTINCT or Top-N)", line=insert.line, construct="INSERT",
                           hint="an upsert sink: 'connector' = 'upsert-kafka' with PRIMARY KEY (...) NOT ENFORCED, or a windowed GROUP BY")
        # The query's frame as it is when its columns are the table's (names, order, types, no precision to cut);
        # otherwise a projection onto the table's columns.
        discards = get_connector(table.connector).discards_values
        as_is = [c.name for c in targets] == list(schema.names) and all(
            source.get(c.name) == c.name and schema[c.name].dataType == c.type.spark
            and (discards or _timestamp_precision(c.type.flink) is None)
            for c in targets if c.type is not None)
        df = planned.df if as_is else planned.df.select(*self._sink_projection(targets, source, schema, planned.updating, discards))
        window_end = next((target for target, column in source.items()
                           if (schema[column].metadata or {}).get(WINDOW_END_METADATA)), None)
        return PlannedQuery(df, planned.mode, planned.upsert_key, planned.bounded, planned.event_time, target_names,
                            planned.changelog, window_end), table

    @staticmethod
    def _sink_projection(targets: list[Any], source: dict[str, str], schema: StructType, updating: bool,
                         discards: bool = False) -> list[Column]:
        """The query's columns cast to the sink table's types, in its order (NULL for a column the INSERT leaves out);
        TIMESTAMP values cut to the table's precision unless the sink ``discards`` them (Connector.discards_values)."""
        projected: list[Column] = []
        for column in targets:
            assert column.type is not None
            if column.name in source:
                value = F.col(_quote(source[column.name]))
                if schema[source[column.name]].dataType != column.type.spark:
                    value = value.cast(column.type.spark)
                projected.append((value if discards else _with_precision(value, column.type.flink)).alias(column.name))
            else:
                projected.append(F.lit(None).cast(column.type.spark).alias(column.name))
        if updating:
            projected.append(F.col(ROWKIND_COLUMN))
        return projected

    def _plan(self, text: str, line: int, construct: str, retractions: bool = False) -> PlannedQuery:
        """Translate, register what the query reads, let Spark plan it, and decide its changelog.

        With ``retractions`` an updating query is planned as Flink's retract changelog (``+I``, ``-U``/``+U``, ``-D``
        in ``ROWKIND_COLUMN``), for a sink that writes every change (a changelog format)."""
        if not significant(tokenize(text)):
            raise SqlError("the query is empty", line=line, construct=construct)
        text = name_unaliased_columns(text)
        registered: dict[str, tuple[bool, bool]] = {}
        self._scans_read_needs = False
        if not self.batch:  # ORDER BY ... LIMIT n on a stream: Flink's sort-limit, a Top-N
            text = sort_limit_as_top_n(text, line) or text
        df, (bounded, event_time) = self._frame(text, line, construct, registered, outermost=not retractions)
        if retractions and not self.batch and ROWKIND_COLUMN not in df.columns and self._output_mode(df, line, construct) != "append":
            df = self._changelog(df, text, line, construct, registered, ())
        if self._scans_read_needs:  # the columns and filters each table scan needs, for readers that can skip the rest
            pushdown.declare(df)
        if self.batch:  # a batch job's result is final: insert-only, whatever the query
            if LATE_WATERMARK_COLUMN in df.columns:  # a reconciliation's tag, carried by SELECT * up to here
                df = df.drop(LATE_WATERMARK_COLUMN)
            columns = _unique_names(list(df.columns))
            return PlannedQuery(df.toDF(*columns), "append", None, True, event_time, columns)
        if not df.isStreaming:  # reads no table (VALUES, literals): bounded and insert-only, as Flink runs it in streaming mode
            columns = _unique_names(list(df.columns))
            df = df.toDF(*columns)
            if ROWKIND_COLUMN in columns:  # FROM_CHANGELOG over VALUES: its rows keep their kinds
                columns.remove(ROWKIND_COLUMN)
                return PlannedQuery(df, "append", None, True, event_time, columns, changelog=True)
            return PlannedQuery(df, "append", None, True, event_time, columns)
        if _UPDATING_TOP_N in registered and ROWKIND_COLUMN not in df.columns:
            raise SqlError("a query over an updating Top-N (in a view or subquery) would lose its retractions: not supported",
                           line=line, construct="Top-N", hint=TOP_N_FORM + "; or SELECT * FROM a view holding the Top-N")
        mode = self._output_mode(df, line, construct)
        columns = _unique_names(list(df.columns))
        if columns != list(df.columns):
            df = df.toDF(*columns)
        if ROWKIND_COLUMN in columns:  # a Top-N's or a retracting aggregation's changelog
            columns.remove(ROWKIND_COLUMN)
            aggregation = find_group_aggregation(text, line, user_aggregates=self._user_aggregates()) \
                if find_top_n(text, line) is None else None
            key = aggregation.upsert_key(columns) if aggregation is not None else ranking_upsert_key(text, line, columns)
            return PlannedQuery(df, mode, key, bounded, event_time, columns, changelog=True)
        if mode == "append":
            return PlannedQuery(df, mode, None, bounded, event_time, columns)
        # Spark's update mode emits a group's new value without saying whether the group is new
        # (and refuses a batch timestamp inside an aggregate), so every update is an upsert '+U'.
        top_n = find_top_n(text, line)
        upsert_key = ranking_upsert_key(text, line, columns) if top_n is not None else self._upsert_key(text, line, columns)
        df = df.select(*[F.col(_quote(c)) for c in columns], F.lit("+U").alias(ROWKIND_COLUMN))
        return PlannedQuery(df, mode, upsert_key, bounded, event_time, columns)

    def _frame(self, text: str, line: int, construct: str, registered: dict[str, tuple[bool, bool]],
               stack: tuple[str, ...] = (), outermost: bool = False) -> tuple[DataFrame, tuple[bool, bool]]:
        text = name_unaliased_columns(text)
        text = rewrite_session_tvfs(text, line) or text
        match = find_match_recognize(text, line)
        if match is not None:
            return self._match_recognize_frame(match, construct, registered, stack)
        nested = find_nested_match_recognize(text, line)
        if nested is not None:  # a subquery with a MATCH_RECOGNIZE: its matches as a view the query reads
            before, subquery, after = nested
            matches, inner_flags = self._frame(subquery, line, construct, registered, stack)
            view = self._operator_view(lambda: matches, line, construct, "matches")
            df, outer_flags = self._frame(f"{before} {view} {after}", line, construct, registered, stack, outermost)
            return df, (outer_flags[0] and inner_flags[0], outer_flags[1] or inner_flags[1])
        changelog_call = find_changelog_call(text, line)
        if changelog_call is not None:  # TO_CHANGELOG/FROM_CHANGELOG: its rows as a view the query reads
            view, inner_flags = self._changelog_function_view(changelog_call, construct, registered, stack)
            df, outer_flags = self._frame(changelog_call.with_view(view), line, construct, registered, stack, outermost)
            return df, (outer_flags[0] and inner_flags[0], outer_flags[1] or inner_flags[1])
        if self.batch:  # bounded tables as Spark batch frames: Spark runs the query as it stands, every result final
            python_aggregation = self._python_aggregation(text, line)
            if python_aggregation is not None:
                return self._batch_python_aggregation_frame(python_aggregation, construct, registered, stack)
            ordered = _order_and_limit(text, line) if self._user_aggregates() else None
            if ordered is not None and self._python_aggregation(ordered[0], line) is not None:
                # ORDER BY / LIMIT over an aggregation calling pandas functions: Spark sorts the aggregated rows
                aggregated, flags = self._frame(ordered[0], line, construct, registered, stack)
                view = self._operator_view(lambda: aggregated, line, construct, "aggregated")
                return self._spark_frame(f"SELECT * FROM {view} {ordered[1]}", line, construct, registered, stack)[0], flags
            return self._spark_frame(text, line, construct, registered, stack)
        set_operation = find_set_operation(text, line, distinct_unions=True)
        if set_operation is not None:
            union, union_flags = self._frame(set_operation.union_text(), line, construct, registered, stack)
            # A distinct UNION of append-only operands stays Spark's; over a changelog it is counted, as INTERSECT is.
            if ROWKIND_COLUMN in union.columns or not set_operation.unions_only:
                marked = [c for c in union.columns if c != ROWKIND_COLUMN]  # a changelog operand's rows keep their kinds
                columns = marked[:len(marked) - len(set_operation.operands)]
                view = self._operator_view(lambda: union, line, construct, "set_operands", union_flags)
                return self._frame(set_operation.aggregation_text(view, columns), line, construct, registered, stack, outermost)
        union_operands = find_union_all(text, line)
        if union_operands is not None:
            framed = self._union_all_frame(union_operands, line, construct, registered, stack)
            if framed is not None:
                return framed
        text = sort_limit_as_top_n(text, line) or text
        sort = find_temporal_sort(text, line)
        if sort is not None:
            keyed, flags = self._frame(sort.keyed_text, line, construct, registered, stack)
            if ROWKIND_COLUMN in keyed.columns:
                raise SqlError("ORDER BY over an updating result is not supported on streams", line=line,
                               construct="ORDER BY over an updating table", hint="ORDER BY the event-time attribute of "
                               "an append-only query, or ORDER BY .. LIMIT n (a Top-N)")
            return sort_frame(self.env, keyed, sort), flags
        semi = find_semi_join(text, line)
        if semi is not None:
            framed = self._semi_join_frame(semi, construct, registered, stack)
            if framed is not None:
                return framed
        top_n = find_top_n(text, line)
        if top_n is not None:
            return self._ranking_frame(top_n, construct, registered, stack, outermost)
        over = find_over_aggregation(text, line, self._user_aggregates())
        if over is not None:
            return self._over_frame(over, construct, registered, stack)
        outer_join = find_outer_join(text, line)
        if outer_join is not None:
            framed = self._outer_join_frame(outer_join, construct, registered, stack)
            if framed is not None:
                return framed
        grouping_sets = find_grouping_sets(text, line)
        if grouping_sets is not None:
            framed = self._grouping_sets_frame(grouping_sets, construct, registered, stack)
            if framed is not None:
                return framed
        users = self._user_aggregates()
        group_window = group_window_as_tvf(text, line, users)
        if group_window is not None:  # a group window calling Python aggregate functions: the window TVF's aggregation
            window = find_group_aggregation(group_window, line, window=True, user_aggregates=users)
            framed = self._window_aggregation_frame(window, construct, registered, stack, group_window=True) if window else None
            if framed is not None:
                return framed
        aggregation = find_group_aggregation(text, line, user_aggregates=users)
        window = find_group_aggregation(text, line, window=True, user_aggregates=users) if aggregation is None else None
        if window is not None:
            framed = self._window_aggregation_frame(window, construct, registered, stack)
            if framed is not None:
                return framed
        chained: Optional[_Source] = None  # an aggregation's append-only source, if Spark refuses the aggregation over it
        if aggregation is not None:
            source = self._single_source(aggregation, construct, registered, stack)
            if aggregation.user_calls:  # Python aggregate functions: kindling's keyed aggregation calls them
                updating = self._updating(source, construct)
                aggregation.check_python_aggregates("updating" if updating else "unbounded")
                return self._aggregation_frame(aggregation, source if updating else None, construct, registered, stack)
            if self._updating(source, construct):
                return self._aggregation_frame(aggregation, source, construct, registered, stack)
            chained = source
        else:
            projection = find_projection(text, line)
            source = self._single_source(projection, construct, registered, stack) if projection is not None else None
            over_changelog = source is not None and ROWKIND_COLUMN in source.df.columns
            # A filter over an updating input must see the old row to retract it when the new one fails the filter
            # (Spark's update mode says only the new value): the input is read as a retracting changelog.
            filtered_updates = projection is not None and projection.where is not None and self._updating(source, construct)
            if projection is not None and source is not None and (over_changelog or filtered_updates):
                # over a Top-N's or a retracting aggregation's changelog: applied row by row, keeping the row kinds
                return self._frame(projection.over(self._changelog_view(source, construct, registered)), line, construct,
                                   registered, stack)[0], source.flags
            if projection is not None and source is not None and projection.source_query is not None \
                    and find_over_aggregation(projection.source_query, projection.source_line, self._user_aggregates()) is not None:
                # over an OVER aggregation's rows, which kindling's operator computed (Spark's text would not reach it)
                view = f"__kindling_over_rows_{next(_VIEW_IDS)}"
                source.df.createOrReplaceTempView(view)
                return self._frame(projection.over(view, row_kind=False), line, construct, registered, stack)[0], source.flags
        df, (bounded, event_time) = self._spark_frame(text, line, construct, registered, stack)
        # Spark refuses DISTINCT aggregates other than COUNT on streams; kindling's retracting aggregation keeps value counts.
        distinct = aggregation is not None and any(c.distinct and c.function != "COUNT" for c in aggregation.calls)
        if aggregation is not None and df.isStreaming and (chained is not None or aggregation.having or distinct):
            try:
                updating = self._output_mode(df, line, construct) != "append"
            except SqlError as refused:
                if chained is None and not distinct:
                    return df, (bounded, event_time)  # refused where the query's output mode is decided
                # An unbounded GROUP BY over a stateful append-only input (a window aggregation, a join): Spark runs
                # one aggregation per query only in append mode, Flink aggregates the input's rows as they come.
                try:
                    return self._aggregation_frame(aggregation, chained, construct, registered, stack)
                except SqlError:
                    raise refused from None
            if updating and aggregation.having:
                # Spark's update mode drops the new value that fails HAVING and keeps the old row; Flink retracts it.
                return self._aggregation_frame(aggregation, None, construct, registered, stack)
        return df, (bounded, event_time)

    def _changelog_function_view(self, call: ChangelogCall, construct: str, registered: dict[str, tuple[bool, bool]],
                                 stack: tuple[str, ...]) -> tuple[str, tuple[bool, bool]]:
        """A view of a TO_CHANGELOG's or FROM_CHANGELOG's rows over its input table, and the input's flags."""
        if self.batch:  # Flink plans neither in batch mode ("not enough rules to produce a node")
            raise SqlError(f"{call.function} is supported in streaming mode only", line=call.line,
                           construct=f"{call.function} in batch mode", hint="SET 'execution.runtime-mode' = 'streaming'")
        text = f"SELECT * FROM {call.table}"
        if call.function == TO_CHANGELOG:
            # Flink's aggregations (without mini-batch) emit a change per row: the changelog read here is theirs
            outer, self._changes_per_record = self._changes_per_record, True
            try:
                rows, flags = self._frame(text, call.line, construct, registered, stack)
                changes = self._changelog(rows, text, call.line, construct, registered, stack)
            finally:
                self._changes_per_record = outer
            return self._operator_view(lambda: to_changelog(changes, call), call.line, construct, "to_changelog"), flags
        rows, flags = self._frame(text, call.line, construct, registered, stack)
        return self._operator_view(lambda: from_changelog(rows, call), call.line, construct, "from_changelog", flags), flags

    def _union_all_frame(self, operands: list[str], line: int, construct: str, registered: dict[str, tuple[bool, bool]],
                         stack: tuple[str, ...]) -> Optional[tuple[DataFrame, tuple[bool, bool]]]:
        """A UNION ALL reading an updating query: every operand's changelog, one after another, under the first operand's
        column names (Flink's union passes each row on with its kind; an append-only operand's rows are '+I'). None when
        every operand is append-only: Spark's own union runs it."""
        frames = [self._frame(operand, line, construct, registered, stack) for operand in operands]
        updating = [df.isStreaming and self._changes(df, line, construct) for df, _ in frames]
        if not any(updating):
            return None
        parts = []
        for (df, _), operand, changes in zip(frames, operands, updating):
            df = self._changelog(df, operand, line, construct, registered, stack) if changes else df.withColumn(ROWKIND_COLUMN, F.lit("+I"))
            kind = df.columns.index(ROWKIND_COLUMN)
            positions = [f"{INTERNAL_PREFIX}u{k}" for k in range(len(df.columns))]  # by position: names may repeat
            df = df.toDF(*positions)
            parts.append(df.select(*[F.col(name) for k, name in enumerate(positions) if k != kind], F.col(positions[kind])))
        names = [c for c in frames[0][0].columns if c != ROWKIND_COLUMN]
        widths = sorted({len(part.columns) - 1 for part in parts})
        if len(widths) > 1:
            raise SqlError(f"the operands of UNION ALL have different numbers of columns ({', '.join(map(str, widths))})",
                           line=line, construct="UNION ALL", hint="the same number of columns, of compatible types, in every operand")
        try:
            union = functools.reduce(lambda left, right: left.union(right), parts).toDF(*names, ROWKIND_COLUMN)
        except Exception as exc:
            raise _spark_error(exc, line, "UNION ALL") from None
        flags = [flag for _, flag in frames]
        return union, (all(bounded for bounded, _ in flags), any(event_time for _, event_time in flags))

    def _grouping_sets_frame(self, grouping_sets: GroupingSets, construct: str, registered: dict[str, tuple[bool, bool]],
                             stack: tuple[str, ...]) -> Optional[tuple[DataFrame, tuple[bool, bool]]]:
        """GROUPING SETS/ROLLUP/CUBE over an updating input: one retracting aggregation per grouping set, their changelogs
        together (kindling/sql/grouping_sets.py); None over an append-only input (Spark's own grouping sets)."""
        source = self._single_source(grouping_sets, construct, registered, stack)
        if source is None or not self._updating(source, construct):
            return None
        types = {field.name: field.dataType for field in source.df.schema.fields}
        folded = {name.lower(): data_type for name, data_type in types.items()}
        nulls = {}
        for key in grouping_sets.keys:
            data_type = types.get(key) or folded.get(key.lower())
            if data_type is None:
                return None  # not a column of the FROM item: Spark's analysis names it
            nulls[key] = f"CAST(NULL AS {flink_type_name(data_type)})"
        return self._frame(grouping_sets.union_text(nulls), grouping_sets.line, construct, registered, stack)

    def _semi_join_frame(self, semi: SemiJoin, construct: str, registered: dict[str, tuple[bool, bool]],
                         stack: tuple[str, ...]) -> Optional[tuple[DataFrame, tuple[bool, bool]]]:
        """An IN/EXISTS subquery over a stream as Flink's semi join on the keyed core; None when the subquery reads no
        stream (Spark runs a subquery over bounded rows itself)."""
        left, (left_bounded, _) = self._frame(semi.left_text, semi.line, construct, registered, stack)
        right, (right_bounded, _) = self._frame(semi.right_text, semi.line, construct, registered, stack)
        if not right.isStreaming or not left.isStreaming:
            return None
        if self._state_ttl_ms() is not None:
            # Flink expires each kept row on its own; a key's state expiring as one would keep rows Flink forgets
            raise SqlError("IN/EXISTS over streams with 'table.exec.state.ttl' set is not supported (Flink's semi join expires "
                           "each kept row on its own)", line=semi.line, construct="IN/EXISTS subquery",
                           hint="SET 'table.exec.state.ttl' = '0' (state kept), or the query in batch mode")
        for side in (left, right):
            if self._changes(side, semi.line, construct):
                raise SqlError("IN/EXISTS with an updating query on either side is not supported (Flink's semi join would "
                               "retract rows)", line=semi.line, construct="IN/EXISTS subquery",
                               hint="IN/EXISTS between append-only tables or views")
        if semi.anti:  # the outer query is the left side's projection and filter: the anti join's changelog is the result
            try:
                return anti_join_frame(self.env, left, right, semi), (left_bounded and right_bounded, False)
            except Exception as exc:
                raise _spark_error(exc, semi.line, "NOT EXISTS subquery") from None
        try:
            joined = semi_join_frame(self.env, left, right, semi)
        except Exception as exc:
            raise _spark_error(exc, semi.line, "IN/EXISTS subquery") from None
        view = f"__kindling_semi_{next(_VIEW_IDS)}"
        joined.createOrReplaceTempView(view)
        df, _ = self._frame(semi.outer_text(view), semi.line, construct, registered, stack)
        # the joined rows carry no event time: a regular join's output has no time attribute in Flink either
        return df, (left_bounded and right_bounded, False)

    def _spark_frame(self, text: str, line: int, construct: str, registered: dict[str, tuple[bool, bool]],
                     stack: tuple[str, ...]) -> tuple[DataFrame, tuple[bool, bool]]:
        """The query translated for Spark and planned by Spark over the views it reads."""
        text = with_declared_types(text, line, self.catalog.objects) or text
        self._refuse_python_aggregates(text, line)
        translation = translate_query(text, line, lambda: f"__kindling_tvf_{next(_VIEW_IDS)}", batch=self.batch,
                                      functions=self._spark_functions)
        # The tables and views in FROM and JOIN positions (a view's own name inside its text is a column or qualifier:
        # Nexmark's `SELECT person.id ...`).
        used = [n for n in translation.names if n in self.catalog.objects and n not in stack]
        for name in used:
            self._register(name, registered, line, stack)
        for tvf in translation.tvfs:
            self._register_tvf(tvf, construct)
        for join in translation.lookups:
            register_lookup_join(self.spark, self.catalog, join)
        while True:
            try:
                df = self._spark_sql(translation.text, line)
                break
            except SqlError:
                raise
            except Exception as exc:
                missing = re.search(r"The table or view `([^`]+)` cannot be found", str(exc))
                name = missing.group(1) if missing else None
                if name in self.catalog.objects and name not in stack and name not in used:
                    # a table the translation did not see in a FROM or JOIN position: registered, and the query planned again
                    used.append(name)
                    self._register(name, registered, line, stack)
                    continue
                if missing and name not in self.catalog:
                    error = _spark_error(exc, line, construct)
                    self.catalog.get(missing.group(1).split("`.`")[-1], line=error.line, construct=construct)
                raise _spark_error(exc, line, construct) from None
        self._refuse_lost_changes(df, [n for n in used if n in registered], line)
        flags = [registered[n] for n in used if n in registered]
        return df, (all(f[0] for f in flags) if flags else True, any(f[1] for f in flags))

    def _spark_sql(self, spark_text: str, line: int) -> DataFrame:
        """A translated query planned by Spark, after the rewrites that need its operands' types."""
        # Each rewrite reads Spark's analysis of the previous one's text (a text Spark cannot analyse is left as it
        # is, and fails below with Spark's own message).
        for rewrite in (with_flink_aggregate_types, with_flink_division, with_flink_rounding, with_flink_json_strings,
                        with_flink_typeof):
            spark_text = rewrite(self.spark, spark_text) or spark_text
        for pending, function in ((left_untyped, "JSON_STRING"), (left_pending, "TYPEOF")):
            if pending(spark_text):
                raise SqlError(f"{function} inside the argument of JSON_STRING or TYPEOF is not supported", line=line,
                               construct=function, hint=f"{function}(x) of a column or an expression over columns")
        return spark_sql(self.spark, spark_text)

    def _refuse_python_aggregates(self, text: str, line: int) -> None:
        """A Python aggregate function's call Spark would be given: refused, naming the function (only kindling's
        GROUP BY and window TVF aggregations over one FROM item call them)."""
        users = self._user_aggregates()
        if not users:
            return
        tokens = tokenize(text, line)
        for name, _, _, _ in function_calls(tokens, tuple(users)):
            label = tokens[name].text
            raise SqlError(f"the Python aggregate function {label} is called where kindling cannot run it (an OVER window, "
                           "a legacy GROUP BY TUMBLE/HOP/SESSION group window, GROUPING SETS, a SESSION window, or an "
                           "aggregation over a join)", line=tokens[name].line, construct=f"Python aggregate function {label}",
                           hint="call it in a GROUP BY or a window TVF aggregation (TABLE(TUMBLE(...)), HOP, CUMULATE) "
                           "over one table, view or subquery")

    def _refuse_lost_changes(self, df: DataFrame, names: list[str], line: int) -> None:
        """Refuse a query that Spark would run over an updating table or view's changelog rows as if each were an
        insertion (a join, set operation, window or OVER aggregation over them): its -U/-D rows would be counted as new
        rows. Projections, filters, GROUP BY and Top-N over one updating input are planned on its changelog before
        this point; anything that reaches Spark with a changelog input is another shape."""
        changelogs = [n for n in names if self._changelog_views.get(n)]
        if not changelogs:
            return
        plan = df._jdf.queryExecution().analyzed().toString()
        read = _views_read(plan)
        updating = [n for n in changelogs if _spark_name(n) in read]
        if not updating:
            return
        shapes = (("Join ", "JOIN"), ("Window [", "OVER aggregation"), ("Union ", "UNION"), ("Intersect ", "INTERSECT"),
                  ("Except ", "EXCEPT"), ("Expand ", "GROUPING SETS"), ("Aggregate [", "window aggregation"),
                  ("Generate ", "table function"))
        shape = next((label for marker, label in shapes if marker in plan), "query")
        raise SqlError(f"{shape} over the updating table or view '{updating[0]}' is not supported: its rows carry updates and "
                       "deletes (-U/+U/-D), which this operator would read as insertions", line=line,
                       construct=f"{shape} over an updating table",
                       hint="a projection, filter, GROUP BY or Top-N over the one updating table or view")

    def _ranking_frame(self, top_n: TopN, construct: str, registered: dict[str, tuple[bool, bool]],
                       stack: tuple[str, ...], outermost: bool = False) -> tuple[DataFrame, tuple[bool, bool]]:
        """A Top-N query: its inner query ranked by the keyed ranking operator, under the outer query.

        The outermost query's Top-1 over an append-only input runs as Spark's own aggregation when Spark can run it
        (an upsert result by the partition keys, as Flink's); a Top-N read by another query keeps the operator's
        changelog, which the reader needs to retract rows.
        """
        inner, flags = self._frame(top_n.inner_text, top_n.inner_line, construct, registered, stack)
        updating_input = self._changes(inner, top_n.inner_line, construct)
        if updating_input:  # ranked as Flink's retractable Top-N, over the input's changelog
            inner = self._changelog(inner, top_n.inner_text, top_n.inner_line, construct, registered, stack)
        plan_text = inner._jdf.queryExecution().analyzed().toString()
        window_input = "Aggregate [" in plan_text or "\nAggregate " in plan_text or plan_text.startswith("Aggregate")
        plan = plan_ranking(inner, top_n, window_input, updating_input)
        if outermost and self._state_ttl_ms() is None:  # Spark's aggregation state has no TTL
            native = self._top_one_frame(inner, top_n, plan, construct, registered, stack)
            if native is not None:
                return native, flags
        try:
            ranked = rank_frame(self.env, inner, top_n, plan, self._state_ttl_ms())
        except Exception as exc:
            raise _spark_error(exc, top_n.line, "Top-N") from None
        if not plan.updating:
            ranked = ranked.drop(ROWKIND_COLUMN)
        view = f"__kindling_rank_{next(_VIEW_IDS)}"
        ranked.createOrReplaceTempView(view)
        if plan.updating:
            registered[_UPDATING_TOP_N] = flags
        df, _ = self._frame(top_n.outer_text(view, plan.updating), top_n.start_line, construct, registered, stack)
        if plan.updating and ROWKIND_COLUMN not in df.columns:
            raise SqlError("an updating Top-N must be the outermost query here (its changelog would be lost)", line=top_n.line,
                           construct="Top-N", hint=TOP_N_FORM)
        return df, flags

    def _top_one_frame(self, inner: DataFrame, top_n: TopN, plan: RankPlan, construct: str, registered: dict[str, tuple[bool, bool]],
                       stack: tuple[str, ...]) -> Optional[DataFrame]:
        """The Top-1 as Spark's aggregation under the outer query, or None when Spark cannot run it so (after a join:
        one aggregation per query in update mode) or the outer query drops a partition key (the upserts' key)."""
        try:
            best = top_one_aggregate(inner, top_n, plan)
        except Exception:  # an order expression Spark cannot aggregate by: the keyed operator ranks it
            return None
        if best is None:
            return None
        view = f"__kindling_rank_{next(_VIEW_IDS)}"
        best.createOrReplaceTempView(view)
        df, _ = self._frame(top_n.outer_text(view, False), top_n.start_line, construct, registered, stack)
        key = list(top_n.partition_names) + ([top_n.alias] if top_n.rank_selected else [])
        if any(k is None or k not in df.columns for k in key):
            return None
        try:
            if self._output_mode(df, top_n.line, construct) != "update":
                return None
        except SqlError:
            return None
        return df

    def _single_source(self, query: Union[GroupAggregation, GroupingSets, Projection], construct: str, registered: dict[str, tuple[bool, bool]],
                       stack: tuple[str, ...]) -> Optional[_Source]:
        """A query's single FROM subquery, SQL view or changelog table, planned; None for other tables, API views and joins."""
        if query.source_query is not None:
            df, flags = self._frame(query.source_query, query.source_line, construct, registered, stack)
            return _Source(df, flags, query.source_query, query.source_line)
        name = query.source_name
        if name in self._operator_views:
            table = self.spark.table(name)
            if ROWKIND_COLUMN not in table.columns:
                return None
            return _Source(table, self._operator_views[name], f"SELECT * FROM `{name}`", query.source_line, [], stack)
        view = self.catalog.objects.get(name) if name is not None else None
        if (isinstance(view, CatalogTable) or (isinstance(view, CatalogView) and view.frame is not None)) and name not in stack:
            self._register(name, registered, query.source_line, stack)
            if not self._changelog_views[name]:
                return None  # an append-only table or API view: Spark reads it in the query as written
            # a table of a changelog format, or a changelog stream's view: its rows, each with its kind, are the updating input
            return _Source(self.spark.table(_spark_name(name)), registered[name], f"SELECT * FROM {_quote(name)}", query.source_line, [], stack)
        if not isinstance(view, CatalogView) or view.frame is not None or name in stack:
            return None
        self._register(name, registered, query.source_line, stack)  # planned once per statement, as for any view
        return _Source(self.spark.table(_spark_name(name)), registered[name], view.query, view.query_line, view.column_names,
                       stack + (name,))

    def _updating(self, source: Optional[_Source], construct: str) -> bool:
        return source is not None and self._changes(source.df, source.line, construct)

    def _changes(self, df: DataFrame, line: int, construct: str) -> bool:
        """Whether ``df`` updates its rows: a changelog kindling's operators made, or a result Spark emits in update mode."""
        return ROWKIND_COLUMN in df.columns or self._output_mode(df, line, construct) != "append"

    def _changelog(self, df: DataFrame, text: str, line: int, construct: str, registered: dict[str, tuple[bool, bool]],
                   stack: tuple[str, ...]) -> DataFrame:
        """``df`` (planned from ``text``) as a changelog with retractions: appends as '+I', an unbounded GROUP BY re-planned
        as kindling's retracting aggregation (Spark's update mode says only the new value, not the one to retract), and a
        projection over an updating input applied to its changelog."""
        if ROWKIND_COLUMN in df.columns:
            return df
        if self._output_mode(df, line, construct) == "append":
            return df.withColumn(ROWKIND_COLUMN, F.lit("+I"))
        aggregation = find_group_aggregation(text, line, user_aggregates=self._user_aggregates())
        if aggregation is not None:
            source = self._single_source(aggregation, construct, registered, stack)
            return self._aggregation_frame(aggregation, source if self._updating(source, construct) else None, construct,
                                           registered, stack)[0]
        projection = find_projection(text, line)
        source = self._single_source(projection, construct, registered, stack) if projection is not None else None
        if projection is None or source is None:
            raise SqlError("reading this updating query as a changelog is not supported (a join of updating inputs, or a set "
                           "operation over one)", line=line, construct=construct,
                           hint="a projection, filter or GROUP BY over one updating subquery or view: " + GROUP_AGGREGATION_FORM)
        return self._frame(projection.over(self._changelog_view(source, construct, registered)), line, construct, registered, stack)[0]

    def _changelog_view(self, source: _Source, construct: str, registered: dict[str, tuple[bool, bool]]) -> str:
        """A temporary view of ``source``'s changelog, under the source view's column names."""
        df = self._changelog(source.df, source.text, source.line, construct, registered, source.stack)
        if source.column_names:
            df = df.toDF(*source.column_names, *([ROWKIND_COLUMN] if ROWKIND_COLUMN in df.columns else []))
        view = f"__kindling_changelog_{next(_VIEW_IDS)}"
        df.createOrReplaceTempView(view)
        return view

    def _aggregation_frame(self, aggregation: GroupAggregation, source: Optional[_Source], construct: str,
                           registered: dict[str, tuple[bool, bool]], stack: tuple[str, ...]) -> tuple[DataFrame, tuple[bool, bool]]:
        """The GROUP BY as kindling's retracting aggregation, over its updating source's changelog (None: its append-only FROM)."""
        line = aggregation.line
        aggregation.check_supported()
        if source is not None:
            projected, _ = self._frame(aggregation.projection_text(self._changelog_view(source, construct, registered)), line,
                                       construct, registered, stack)
            flags = source.flags
        else:
            projected, flags = self._frame(aggregation.projection_text(None), line, construct, registered, stack)
        return self._aggregated(projected, aggregation, construct, registered, stack), flags

    def _outer_join_frame(self, join: OuterJoin, construct: str, registered: dict[str, tuple[bool, bool]],
                          stack: tuple[str, ...]) -> Optional[tuple[DataFrame, tuple[bool, bool]]]:
        """A regular outer join: both sides keyed by the join key through the outer join operator, then the SELECT list
        and WHERE over its changelog; None when a side is not a stream (Spark's stream-static join runs it)."""
        if join.as_of is not None:
            return self._temporal_join_frame(join, construct, registered, stack)
        left, left_flags = self._frame(join.left_text, join.line, construct, registered, stack)
        right, right_flags = self._frame(join.right_text, join.line, construct, registered, stack)
        if not (left.isStreaming and right.isStreaming):
            return None
        updating = [self._changes(side, join.line, construct) for side in (left, right)]
        if join.kind == "INNER" and not any(updating):
            return None  # an inner join of append-only streams: Spark's own join
        # an updating side as its retract changelog (Spark's update mode would say only the new value)
        left, right = (self._changelog(side, text, join.line, construct, registered, stack)
                       if is_updating and ROWKIND_COLUMN not in side.columns else side
                       for side, text, is_updating in ((left, join.left_text, updating[0]), (right, join.right_text, updating[1])))
        if self._state_ttl_ms() is not None:
            # Flink expires each kept row on its own; a key's state expiring as one would keep rows Flink forgets
            raise SqlError(f"{join.kind} JOIN over streams with 'table.exec.state.ttl' set is not supported (Flink's join "
                           "expires each kept row on its own)", line=join.line, construct=f"{join.kind} JOIN",
                           hint="SET 'table.exec.state.ttl' = '0' (state kept), or the query in batch mode")
        columns: list[list[str]] = []

        def joined() -> DataFrame:
            rows, left_columns, right_columns = outer_join_frame(self.env, left, right, join)
            columns.extend([left_columns, right_columns])
            return rows

        view = self._operator_view(joined, join.line, construct, "outer_join")
        flags = (left_flags[0] and right_flags[0], left_flags[1] or right_flags[1])
        return self._frame(join.outer_text(view, *columns), join.line, construct, registered, stack)[0], flags

    def _temporal_join_frame(self, join: OuterJoin, construct: str, registered: dict[str, tuple[bool, bool]],
                             stack: tuple[str, ...]) -> Optional[tuple[DataFrame, tuple[bool, bool]]]:
        """An event-time temporal join (kindling.sql.temporal_join); None for a join whose table has no event time or
        whose AS OF is no event-time attribute: a lookup join, which the translator plans (or refuses by name)."""
        found = self.catalog.objects.get(join.right_table or "")
        version = versioned(found) if found is not None else None
        if version is None:
            return None
        left, left_flags = self._frame(join.side_text("left", f"{join.as_of} AS `{TEMPORAL_TIME}`"), join.line, construct,
                                       registered, stack)
        if "spark.watermarkDelayMs" not in (left.schema[TEMPORAL_TIME].metadata or {}) or not left.isStreaming:
            return None
        check_versioned(join, join.right_table or "", version.primary_key)
        rowtime = f"{_quote(join.right_qualifier)}.{_quote(version.rowtime or '')}"
        # a versioned view: every row its deduplication would emit is a version (a micro-batch's deduplication emits only
        # each key's last), so the join reads the rows before it
        rows_from = f"({version.rows_query}) AS {_quote(join.right_qualifier)}" if version.rows_query else None
        right_text = join.side_text("right", f"{rowtime} AS `{TEMPORAL_TIME}`", rows_from)
        right, right_flags = self._frame(right_text, join.line, construct, registered, stack)
        if self._changes(left, join.line, construct):
            raise SqlError("an event-time temporal join over an updating left input is not supported (Flink's temporal join "
                           "consumes only inserts on its left side)", line=join.line, construct=TEMPORAL_JOIN,
                           hint="join an append-only table or view on the left")
        if self._changes(right, join.line, construct) and ROWKIND_COLUMN not in right.columns:
            right = self._changelog(right, right_text, join.line, construct, registered, stack)
        if self._state_ttl_ms() is not None:
            raise SqlError("an event-time temporal join with 'table.exec.state.ttl' set is not supported (Flink clears an "
                           "idle key's versions on processing time, which this event-time operator has no timer for)",
                           line=join.line, construct=TEMPORAL_JOIN, hint="SET 'table.exec.state.ttl' = '0' (state kept)")
        left, right = (side.withColumn(TEMPORAL_TIME, F.unix_micros(F.col(TEMPORAL_TIME))) for side in (left, right))
        columns: list[list[str]] = []

        def joined() -> DataFrame:
            rows, left_columns, right_columns = temporal_join_frame(self.env, left, right, join, version.rows_query is not None)
            columns.extend([left_columns, right_columns])
            return rows

        view = self._operator_view(joined, join.line, construct, "temporal_join")
        flags = (left_flags[0] and right_flags[0], left_flags[1])
        return self._frame(join.outer_text(view, *columns, row_kind=False), join.line, construct, registered, stack)[0], flags

    def _operator_view(self, build: Callable[[], DataFrame], line: int, construct: str, kind: str,
                       changelog_flags: Optional[tuple[bool, bool]] = None) -> str:
        """The rows ``build`` makes (a keyed operator's output) as a temporary view for the SQL over them; Spark's errors
        while building them become refusals naming ``construct``. With ``changelog_flags`` (its input's), a query over the
        view reads its row kinds as a changelog (an aggregation over it retracts); without, the SQL over it handles them."""
        try:
            rows = build()
        except SqlError:
            raise
        except Exception as exc:
            raise _spark_error(exc, line, construct) from None
        view = f"__kindling_{kind}_{next(_VIEW_IDS)}"
        rows.createOrReplaceTempView(view)
        if changelog_flags is not None:
            self._operator_views[view] = changelog_flags
        return view

    def _over_frame(self, over: OverAggregation, construct: str, registered: dict[str, tuple[bool, bool]],
                    stack: tuple[str, ...]) -> tuple[DataFrame, tuple[bool, bool]]:
        """An OVER aggregation: its input rows through the keyed OVER operator, then the SELECT list over its rows."""
        projected, flags = self._frame(over.projection_text(), over.line, construct, registered, stack)
        if self._state_ttl_ms() is not None:
            # Flink clears an idle key's OVER state on a processing-time timer; this operator runs on event time
            raise SqlError("OVER aggregation with 'table.exec.state.ttl' set is not supported (Flink clears an idle key's "
                           "frame on processing time, which this event-time operator has no timer for)", line=over.line,
                           construct="OVER aggregation", hint="SET 'table.exec.state.ttl' = '0' (state kept)")
        if ROWKIND_COLUMN in projected.columns:
            raise SqlError("OVER aggregation over an updating table or view is not supported: its rows carry updates and "
                           "deletes", line=over.line, construct="OVER aggregation over an updating table",
                           hint="an OVER aggregation over an append-only table or view")
        view = self._operator_view(lambda: over_frame(self.env, projected, over), over.line, construct, "over")
        return self._frame(over.result_text(view), over.line, construct, registered, stack)[0], flags

    def _match_recognize_frame(self, match: MatchRecognize, construct: str, registered: dict[str, tuple[bool, bool]],
                               stack: tuple[str, ...]) -> tuple[DataFrame, tuple[bool, bool]]:
        """A MATCH_RECOGNIZE item: its input's rows through the pattern's NFA per partition, then the query over the
        matches (one row each: the partition columns, then the measures)."""
        rows, flags = self._frame(f"SELECT * FROM {match.source}", match.line, construct, registered, stack)
        if not self.batch and self._changes(rows, match.line, construct):
            raise SqlError("MATCH_RECOGNIZE doesn't support consuming update and delete changes (as in Flink): its input "
                           "must be append-only", line=match.line, construct="MATCH_RECOGNIZE over an updating table",
                           hint="MATCH_RECOGNIZE over an append-only table or view")
        columns = [f.name for f in rows.schema.fields if not f.name.startswith(INTERNAL_PREFIX)]
        rows = rows.select(*[F.col(_quote(c)) for c in columns])
        order = next((f for f in rows.schema.fields if f.name.lower() == match.order.lower()), None)
        if order is None:
            raise SqlError(f"MATCH_RECOGNIZE: ORDER BY {match.order}: no such column in the input", line=match.line,
                           construct="MATCH_RECOGNIZE")
        if not isinstance(order.dataType, (TimestampType, TimestampNTZType)) or (
                not self.batch and "spark.watermarkDelayMs" not in (order.metadata or {})):
            raise SqlError(f"MATCH_RECOGNIZE: ORDER BY {order.name}: the first ORDER BY key must be the input's event-time "
                           "attribute (a column with a WATERMARK), ascending; processing-time patterns are not supported",
                           line=match.line, construct="MATCH_RECOGNIZE ORDER BY", hint="ORDER BY the rowtime column")
        match.order = order.name
        typing_view = f"__kindling_match_input_{next(_VIEW_IDS)}"
        rows.createOrReplaceTempView(typing_view)
        compiled = compile_match(match, columns)
        types = [self._spark_frame(f"SELECT {sql} AS m FROM {typing_view}", match.line, "MATCH_RECOGNIZE MEASURES",
                                   registered, stack)[0].schema.fields[0].dataType for sql in compiled.measure_sql()]
        compiled.typed(types)
        partition = [next(f for f in rows.schema.fields if f.name.lower() == p.lower()) for p in match.partition]
        output = StructType([StructField(f.name, f.dataType, True) for f in partition]
                            + [StructField(name, t, True) for (_, name), t in zip(match.measures, types)])
        if self.batch:
            view = self._operator_view(lambda: batch_match_frame(rows, match, compiled, output), match.line, construct, "match")
        else:
            view = self._operator_view(lambda: match_frame(self.env, rows, match, compiled, output), match.line, construct,
                                       "match")
        return self._frame(match.outer_text(view), match.line, construct, registered, stack)[0], flags

    def _window_aggregation_frame(self, window: GroupAggregation, construct: str, registered: dict[str, tuple[bool, bool]],
                                  stack: tuple[str, ...], group_window: bool = False) -> Optional[tuple[DataFrame, tuple[bool, bool]]]:
        """A window TVF aggregation on kindling's keyed operator: over a processing-time attribute each window's result
        once the wall clock passes its end, on processing-time timers (Spark's window aggregation needs a watermark);
        over an event-time attribute, when it calls a Python aggregate function, once the watermark passes its end
        (``group_window``: the query was a legacy group window, which Flink runs pandas functions in). None for the
        event-time windows Spark aggregates."""
        projected, flags = self._frame(window.projection_text(None), window.line, construct, registered, stack)
        end = next((f for f in projected.schema.fields if f.name.lower() == "window_end"), None)
        if end is None:
            return None
        event_time = "spark.watermarkDelayMs" in (end.metadata or {})
        if event_time and not window.user_calls:
            return None
        window.check_supported()
        window.check_python_aggregates("group window" if group_window else "window")
        df = self._aggregated(projected, window, construct, registered, stack, processing_time_window=not event_time,
                              event_time_window=event_time)
        return df.drop(ROWKIND_COLUMN), flags  # append-only: one final row per window

    def _user_aggregates(self) -> dict[str, UserDefinedAggregateFunction]:
        """The Python aggregate functions (udaf) registered in the session, by upper-case name."""
        return {name.upper(): f for name, f in self.catalog.functions.items() if isinstance(f, UserDefinedAggregateFunction)}

    def _python_aggregation(self, text: str, line: int) -> Optional[GroupAggregation]:
        """A batch query's GROUP BY (or window) aggregation that calls a Python aggregate function; None for any other."""
        users = self._user_aggregates()
        if not users:
            return None
        text = group_window_as_tvf(text, line, users) or text
        found = find_group_aggregation(text, line, user_aggregates=users) or \
            find_group_aggregation(text, line, window=True, user_aggregates=users)
        return found if found is not None and found.user_calls else None

    def _batch_python_aggregation_frame(self, aggregation: GroupAggregation, construct: str,
                                        registered: dict[str, tuple[bool, bool]],
                                        stack: tuple[str, ...]) -> tuple[DataFrame, tuple[bool, bool]]:
        """A batch aggregation of pandas aggregate functions: Spark groups the projected rows, each group's calls run
        over its Arrow columns, then the SELECT list."""
        aggregation.check_supported()
        aggregation.check_python_aggregates("batch")
        projected, flags = self._frame(aggregation.projection_text(None), aggregation.line, construct, registered, stack)
        try:
            aggregated = batch_aggregate_frame(projected, aggregation)
        except SqlError as error:
            raise SqlError(error.reason, line=aggregation.line, construct=error.construct, hint=error.hint) from None
        except Exception as exc:
            raise _spark_error(exc, aggregation.line, construct) from None
        return self._over_aggregated(aggregated, aggregation, construct, registered, stack), flags

    def _aggregated(self, projected: DataFrame, aggregation: GroupAggregation, construct: str, registered: dict[str, tuple[bool, bool]],
                    stack: tuple[str, ...], processing_time_window: bool = False, event_time_window: bool = False) -> DataFrame:
        """The aggregation operator over ``projected`` (keys, arguments, row kind), then the SELECT list and HAVING over
        its keys and results."""
        try:
            aggregated = aggregate_frame(self.env, projected, aggregation, self._state_ttl_ms(), processing_time_window,
                                         event_time_window, per_record=self._changes_per_record)
        except SqlError as error:
            raise SqlError(error.reason, line=aggregation.line, construct=error.construct, hint=error.hint) from None
        except Exception as exc:
            raise _spark_error(exc, aggregation.line, construct) from None
        return self._over_aggregated(aggregated, aggregation, construct, registered, stack)

    def _over_aggregated(self, aggregated: DataFrame, aggregation: GroupAggregation, construct: str,
                         registered: dict[str, tuple[bool, bool]], stack: tuple[str, ...]) -> DataFrame:
        """The SELECT list and HAVING over an aggregation's keys and results."""
        view = f"__kindling_aggregate_{next(_VIEW_IDS)}"
        aggregated.createOrReplaceTempView(view)
        names = [alias or output_name(expression) or f"EXPR${n}" for n, (expression, alias) in enumerate(aggregation.select)]
        text = aggregation.result_text(view, names, row_kind=ROWKIND_COLUMN in aggregated.columns)
        return self._frame(text, aggregation.line, construct, registered, stack)[0]

    def _state_ttl_ms(self) -> Optional[int]:
        """``table.exec.state.ttl`` in milliseconds; None (state kept forever) when it is 0, Flink's default."""
        text = self.session_options.get("table.exec.state.ttl", SESSION_OPTIONS["table.exec.state.ttl"])
        try:
            ttl = parse_duration(text)
        except (ValueError, OptionError) as exc:
            raise SqlError(f"option 'table.exec.state.ttl' = '{text}' is not a duration: {exc}", construct="SET",
                           hint="a duration such as '0', '1 h', '30 min' or '86400000 ms'") from None
        ms = int(ttl.total_seconds() * 1000)
        return ms or None

    def _mode_checker(self) -> tuple[Any, Any, Any]:
        """Spark's streaming plan checker and its Append and Update output modes, looked up once per JVM (each name of a
        class's package path is a Py4J round trip: 13 of them per output mode decided, two or more per INSERT)."""
        jvm = self.spark._jvm
        if self._mode_checker_of is None or self._mode_checker_of[0] is not jvm:
            modes = jvm.org.apache.spark.sql.streaming.OutputMode
            self._mode_checker_of = (jvm, jvm.org.apache.spark.sql.catalyst.analysis.UnsupportedOperationChecker,
                                     modes.Append(), modes.Update())
        return self._mode_checker_of[1:]

    def _output_mode(self, df: DataFrame, line: int, construct: str) -> str:
        if not df.isStreaming:
            return "append"  # reads no table (VALUES, literals): a bounded input, every row final
        checker, append, update = self._mode_checker()
        plan = df._jdf.queryExecution().analyzed()
        try:
            checker.checkForStreaming(plan, append)
            return "append"
        except Exception as append_error:
            try:
                checker.checkForStreaming(plan, update)
                return "update"
            except Exception as update_error:
                message = str(update_error)
                if "output mode" in message.lower():
                    message = str(append_error)
                raise _spark_error(_Message(message), line, construct) from None

    def _upsert_key(self, text: str, line: int, columns: list[str]) -> Optional[list[str]]:
        """The output columns that are the query's GROUP BY keys (textually, at the outermost level)."""
        select_items, group_items = _outer_select_and_group(text)
        if not group_items:
            if _outer_is_distinct(text):
                return list(columns)
            if select_items and all(_GLOBAL_AGGREGATE.match(expr) for expr, _ in select_items):
                return []  # a global aggregation: one row, each update replaces it
            return None
        keys: list[str] = []
        normalised = [(_normalise(expr), alias) for expr, alias in select_items]
        for group in group_items:
            target = _normalise(group)
            for index, (expr, alias) in enumerate(normalised):
                if expr == target or (alias is not None and alias == target) or expr.split(".")[-1] == target.split(".")[-1] == target:
                    if index < len(columns):
                        keys.append(columns[index])
                    break
            else:
                return None
        return keys or None

    # --- registering catalog objects as Spark views -------------------------------------------
    def _register(self, name: str, registered: dict[str, tuple[bool, bool]], line: int, stack: tuple[str, ...] = ()) -> None:
        if name in registered:
            return
        if name in stack:
            raise SqlError(f"view '{name}' refers to itself (through {' -> '.join(stack + (name,))})", line=line, construct="CREATE VIEW")
        obj = self.catalog.objects[name]
        if isinstance(obj, CatalogTable):
            df, flags = self._table_frame(obj, line)
        elif obj.frame is not None:
            df, flags = _api_view_frame(obj.frame)
            if self.batch and df.isStreaming:
                raise SqlError(f"view '{name}' is a DataStream, which kindling runs as a stream: it cannot be read in batch mode",
                               line=line, construct="batch mode", hint="a table of a bounded connector, from_elements or from_pandas")
        else:
            df, flags = self._frame(obj.query, obj.query_line, f"view {name}", registered, stack + (name,))
            if obj.column_names:
                if len(obj.column_names) != len(df.columns):
                    raise SqlError(f"view '{name}' names {len(obj.column_names)} columns but its query has {len(df.columns)}",
                                   line=obj.query_line, construct="CREATE VIEW")
                df = df.toDF(*obj.column_names)
            elif (columns := _unique_names(list(df.columns))) != list(df.columns):  # a view's columns have Flink's names
                df = df.toDF(*columns)
        df.createOrReplaceTempView(_spark_name(name))
        registered[name] = flags
        self._changelog_views[name] = ROWKIND_COLUMN in df.columns

    def _table_frame(self, table: CatalogTable, line: int) -> tuple[DataFrame, tuple[bool, bool]]:
        _ = self.spark  # Column expressions below need a running session
        options = table.connector_options()
        options.setdefault(TABLE_SCAN, new_scan_id())  # this scan's id: what it needs is declared under it (pushdown)
        self._scans_read_needs = self._scans_read_needs or get_connector(table.connector).reads_scan_needs
        try:
            source = Source(table.connector, options, table.source_schema())
        except (OptionError, ValueError) as exc:
            raise SqlError(f"table '{table.name}': {exc}", line=table.line, construct="WITH options of the source table") from None
        computed = {c.name: translate_expression(c.expression or "", c.line, self._spark_functions)
                    for c in table.columns if c.kind == "computed"}
        if self.batch:
            return self._bounded_table_frame(table, source, computed, line)
        strategy = WatermarkStrategy.no_watermarks()
        rowtime = table.watermark.column if table.watermark is not None else None
        types = table.flink_types(streaming=True)
        if table.watermark is not None:
            delay = watermark_delay(table.watermark.expression, table.watermark.column, table.watermark.line)
            strategy = WatermarkStrategy.for_bounded_out_of_orderness(delay)
        try:
            df = self.env.source_frame(source, strategy, lambda loaded: self._rowtime(table, loaded, computed, types))
        except SqlError:
            raise
        except Exception as exc:
            raise _spark_error(exc, table.watermark.line if table.watermark else table.line, f"table '{table.name}'") from None
        projection: list[Column] = []
        for column in table.columns:
            if column.name == rowtime:
                projection.append(with_type(F.col(ROWTIME), column.name, types[column.name], df.schema[ROWTIME].metadata))
            elif column.kind == "computed":
                try:
                    projection.append(with_type(F.expr(computed[column.name]), column.name, types[column.name]))
                except Exception as exc:
                    raise _spark_error(exc, column.line, f"computed column '{column.name}'") from None
            else:
                projection.append(with_type(_with_precision(F.col(_quote(column.name)), column.type.flink), column.name, types[column.name]))
        if source.changelog:  # a CDC format: the table is updating, each row keeps its kind
            projection.append(F.col(ROWKIND_COLUMN))
        try:
            df = df.select(*projection)
        except Exception as exc:
            raise _spark_error(exc, table.line, f"table '{table.name}'") from None
        return df, (source.bounded, table.watermark is not None)

    @staticmethod
    def _rowtime(table: CatalogTable, loaded: DataFrame, computed: dict[str, str], types: dict[str, Optional[str]]) -> Column:
        """The event time of a table's rows: its watermark's column, whose type the catalog checked when it is declared
        or derived from the text; a computed column of another form is checked here, on its planned type."""
        assert table.watermark is not None
        rowtime = table.watermark.column
        if rowtime not in computed:
            return F.col(_quote(rowtime))
        expression = F.expr(computed[rowtime])
        if types[rowtime] is None:
            # typed from the columns the expression's value comes from, if it is one of them whatever the row
            # (no Spark analysis), else from the planned expression
            data_type = shared_type(table.source_schema(), result_columns(next(c.expression or "" for c in table.columns if c.name == rowtime)))
            if not isinstance(data_type, (TimestampType, TimestampNTZType)):
                field = loaded.select(expression).schema.fields[0]
                data_type = field.dataType
                if not isinstance(data_type, (TimestampType, TimestampNTZType)):
                    check_rowtime_type(flink_type_name(data_type) + ("" if field.nullable else " NOT NULL"), table.watermark.line)
            if isinstance(data_type, TimestampNTZType):
                return expression.cast(TimestampType())
        return expression

    def _bounded_table_frame(self, table: CatalogTable, source: Source, computed: dict[str, str],
                             line: int) -> tuple[DataFrame, tuple[bool, bool]]:
        """A table read in batch mode: one Spark batch of its rows; its time attribute is an ordinary timestamp."""
        micro_batches = self.input_ranges(table) if self.input_ranges is not None else None
        if not source.bounded and micro_batches is None:
            raise SqlError(f"Querying an unbounded table '{table.name}' in batch mode is not allowed. The table source is unbounded.",
                           line=line, construct="batch mode",
                           hint="SET 'execution.runtime-mode' = 'streaming'; or bound the source (datagen 'number-of-rows', "
                                "kafka 'scan.bounded.mode', filesystem without 'source.monitor-interval')")
        if source.changelog:
            raise SqlError(f"Querying a table in batch mode is currently only possible for INSERT-only table sources. But the source "
                           f"for table '{table.name}' produces other changelog messages than just INSERT.", line=line,
                           construct="batch mode", hint="SET 'execution.runtime-mode' = 'streaming'")
        try:
            df = self.env.read_bounded(source, micro_batches)
            types = table.flink_types(streaming=False)
            projection = [with_type(F.expr(computed[c.name]) if c.kind == "computed" else _with_precision(F.col(_quote(c.name)), c.type.flink),
                                    c.name, types[c.name]) for c in table.columns]
            if micro_batches is not None and table.watermark is not None:
                projection.append(F.col(LATE_WATERMARK_COLUMN))  # for the window TVFs over it (_register_tvf)
                tagged = df.select(*projection)
                self.behind_watermark.append((table.name, tagged.where(
                    F.col(_quote(table.watermark.column)) <= F.timestamp_millis(F.col(LATE_WATERMARK_COLUMN)))))
                return tagged, (True, False)
            return df.select(*projection), (True, False)
        except Exception as exc:
            raise _spark_error(exc, table.line, f"table '{table.name}'") from None

    def _register_tvf(self, tvf: WindowTvf, construct: str) -> None:
        """A window TVF's view: the input plus window_start, window_end, window_time.

        window_end carries Spark's event-time marker, so a GROUP BY window_start, window_end runs
        in append mode and emits each window once the watermark passes its end, as Flink does.
        """
        try:
            df = (self.spark.sql(f"SELECT * FROM {tvf.source}") if not tvf.source.lstrip().startswith("(")
                  else self.spark.sql(f"SELECT * FROM {tvf.source} AS __kindling_tvf_input"))
        except Exception as exc:
            raise _spark_error(exc, tvf.line, f"window TVF {tvf.kind}") from None
        time_column = tvf.time_column
        if df.isStreaming and _aggregates(df):
            # Spark plans it, then stops at run time on the two event-time columns (the inner window's and this one's).
            raise SqlError(f"a window TVF {tvf.kind} over the result of a streaming aggregation (a cascading window aggregation) "
                           "is not supported", line=tvf.line, construct="cascading window aggregation",
                           hint="aggregate the source's rows in one window TVF (GROUP BY window_start, window_end, ...)")
        if time_column not in df.columns:
            hint = nearest(time_column, df.columns)
            raise SqlError(f"window TVF {tvf.kind}: DESCRIPTOR({time_column}) names no column of the input"
                           + (f"; did you mean '{hint}'?" if hint else ""), line=tvf.line, construct=f"window TVF {tvf.kind}")
        data_type = df.schema[time_column].dataType
        if not isinstance(data_type, TimestampType):
            raise SqlError(f"window TVF {tvf.kind}: DESCRIPTOR({time_column}) must be a time attribute (TIMESTAMP with a WATERMARK), "
                           f"not {data_type.simpleString()}", line=tvf.line, construct=f"window TVF {tvf.kind}")
        delay_ms = (df.schema[time_column].metadata or {}).get("spark.watermarkDelayMs")
        # A processing-time attribute (PROCTIME()) gets no watermark (Spark refuses a second one over a watermarked
        # input): its window aggregation runs on processing-time timers (``_processing_time_window_frame``).
        marker = {"spark.watermarkDelayMs": int(delay_ms)} if delay_ms is not None else {}
        bounds, window_time = window_property_types(carried_type(df.schema[time_column]))
        ts = F.col(_quote(time_column))
        columns = [F.col(_quote(c)) for c in df.columns]
        if tvf.kind == "CUMULATE":
            step_us, size_us = _micros(tvf.step, tvf.line), _micros(tvf.size, tvf.line)
            if size_us % step_us:
                raise SqlError(f"window TVF CUMULATE: size ({tvf.size}) must be a multiple of step ({tvf.step})", line=tvf.line,
                               construct="window TVF CUMULATE")
            base = F.window(ts, tvf.size, tvf.size, tvf.offset) if tvf.offset else F.window(ts, tvf.size)
            windowed = df.select(*columns, base.start.alias("window_start"), F.explode(F.sequence(F.lit(1), F.lit(size_us // step_us))).alias("__k"))
            end = F.timestamp_micros(F.unix_micros(F.col("window_start")) + F.col("__k").cast("long") * F.lit(step_us).cast("long"))
            windowed = windowed.withColumn("window_end", end).where(ts < F.col("window_end"))
            out = windowed.select(*columns, with_type(F.col("window_start"), "window_start", bounds),
                                  with_type(F.col("window_end"), "window_end", bounds, marker),
                                  with_type(_window_time(F.col("window_end")), "window_time", window_time, marker))
        else:
            if tvf.kind == "TUMBLE":
                window = F.window(ts, tvf.size, tvf.size, tvf.offset) if tvf.offset else F.window(ts, tvf.size)
            else:
                window = F.window(ts, tvf.size, tvf.slide, tvf.offset) if tvf.offset else F.window(ts, tvf.size, tvf.slide)
            windowed = df.select(*columns, window.alias(_TVF_WINDOW))
            w = F.col(_TVF_WINDOW)
            out = windowed.select(*columns, with_type(w.start, "window_start", bounds), with_type(w.end, "window_end", bounds, marker),
                                  with_type(_window_time(w.end), "window_time", window_time, marker))
        if self.batch:
            out = self._batch_window_rows(out, tvf)
        out.createOrReplaceTempView(tvf.view)

    def _batch_window_rows(self, out: DataFrame, tvf: WindowTvf) -> DataFrame:
        """A batch window TVF's rows: window_end marked for the caller; in a reconciliation, the rows whose window
        had closed when the streaming run read them are taken out (that run dropped them as late) and kept aside."""
        end = F.col("window_end")
        if LATE_WATERMARK_COLUMN in out.columns:
            out = out.cache()  # read once for the result and once for the late rows; the reconciliation unpersists it
            closed = end <= F.timestamp_millis(F.col(LATE_WATERMARK_COLUMN))
            self.late_rows.append((f"window TVF {tvf.kind} over {tvf.source.strip()}", out.where(closed).drop(LATE_WATERMARK_COLUMN), out))
            out = out.where(~closed).drop(LATE_WATERMARK_COLUMN)
        metadata = dict(out.schema["window_end"].metadata or {}, **{WINDOW_END_METADATA: True})
        return out.withColumn("window_end", end.alias("window_end", metadata=metadata))

    # --- Python API helpers -------------------------------------------------------------------
    def create_temporary_view(self, name: str, obj: Any) -> None:
        """Register a DataStream or a Spark DataFrame under a name (a Table API table: ``catalog.put_query_view``)."""
        if not isinstance(obj, (DataStream, DataFrame)):
            raise TypeError(f"create_temporary_view takes a DataStream or a Spark DataFrame, got {type(obj).__name__}")
        self.catalog.put_view(name, obj)

    def create_temporary_function(self, name: str, function: Any, line: Optional[int] = None) -> None:
        if isinstance(function, UserDefinedAggregateFunction):  # called by kindling's aggregations, not by Spark
            ship_by_value(function.func)
            self._spark_functions.pop(name.lower(), None)
            self.catalog.functions[name] = function
            return
        if not isinstance(function, (UserDefinedScalarFunction, UserDefinedTableFunction)):
            raise SqlError(f"function '{name}' must be declared with @udf(result_type=...), @udtf(result_types=[...]) or "
                           "udaf(...) so that its SQL type is known", line=line, construct="CREATE FUNCTION",
                           hint="from kindling.sql import udf; @udf(result_type='STRING') def f(x): ...")
        spark_name = name
        if isinstance(function, UserDefinedScalarFunction) and name.lower() in self._spark_builtins():
            # Spark resolves its own built-in before a session function of the same name: the user's is called
            # under a name of its own, which the translator puts in the query's calls.
            spark_name = f"__kindling_fn_{name.lower()}"
            self._spark_functions[name.lower()] = spark_name
        else:
            self._spark_functions.pop(name.lower(), None)
        function.register(self.spark, spark_name)
        self.catalog.functions[name] = function

    def _spark_builtins(self) -> set[str]:
        if self._builtins is None:
            self._builtins = {row[0].lower() for row in self.spark.sql("SHOW SYSTEM FUNCTIONS").collect()}
        return self._builtins


class _Message(Exception):
    """An error message from a JVM call, carried as an exception."""


def _spark_error(exc: BaseException, line: int, construct: str) -> SqlError:
    if isinstance(exc, SqlError):
        return exc
    text = str(exc)
    hint = None
    if "Non-time-based windows" in text:
        hint = "window aggregation with GROUP BY TUMBLE/HOP or a window TVF"
    elif "Distinct aggregations" in text:
        hint = ("DISTINCT aggregates (COUNT/SUM/AVG/MIN/MAX) in a GROUP BY without a window; a window aggregation takes "
                "COUNT(DISTINCT x) only")
    elif "Sorting is not supported" in text:
        hint = ("ORDER BY on a stream as a Top-N: SELECT * FROM (SELECT *, ROW_NUMBER() OVER (ORDER BY x) AS rn FROM t) "
                "WHERE rn <= N, or the query in batch mode (SET 'execution.runtime-mode' = 'batch')")
    elif "Intersect" in text or "Except" in text:
        hint = "INTERSECT and EXCEPT run in batch mode (SET 'execution.runtime-mode' = 'batch'); on streams, a join"
    elif "join" in text.lower() and ("stream-stream" in text.lower() or "streaming DataFrames/Datasets" in text):
        hint = "joins of two streams need WATERMARKs on both and a time bound: a.ts BETWEEN b.ts - INTERVAL '1' HOUR AND b.ts"
    elif "subquery expressions" in text:
        hint = ("x IN (SELECT y FROM t ...) and [NOT] EXISTS (SELECT ... FROM t WHERE t.y = outer.x) over one table each, as a "
                "condition of the outer WHERE (NOT EXISTS under a projection and filter only); NOT IN and other subqueries in "
                "batch mode (SET 'execution.runtime-mode' = 'batch')")
    return from_spark(exc, statement_line=line, construct=construct, hint=hint)


def _api_view_frame(frame: Any) -> tuple[DataFrame, tuple[bool, bool]]:
    if isinstance(frame, DataStream):
        df = frame._df
        columns = [F.col(_quote(f.name)) for f in frame.schema.fields]
        if frame._event_time and "rowtime" not in frame.schema.fieldNames():
            columns.append(F.col(ROWTIME).alias("rowtime"))
        if ROWKIND_COLUMN in df.columns:  # a changelog stream (from_changelog_stream): each row's kind
            columns.append(F.col(ROWKIND_COLUMN))
        return df.select(*columns), (frame.is_bounded, frame._event_time)
    return frame, (not frame.isStreaming, False)


def _views_read(plan: str) -> set[str]:
    """The temporary views an analyzed plan (its tree as text) reads directly, not those inside another view's plan."""
    names: set[str] = set()
    inside: Optional[int] = None  # the depth of the view whose subtree is being skipped
    for line in plan.splitlines():
        depth = len(line) - len(line.lstrip(" +-:"))
        if inside is not None:
            if depth > inside:
                continue
            inside = None
        match = re.match(r"View \(`([^`]+)`", line[depth:])
        if match:
            names.add(match.group(1))
            inside = depth
    return names


def _aggregates(df: DataFrame) -> bool:
    """Whether a DataFrame's analysed plan aggregates (its rows are a streaming aggregation's results)."""
    def walk(node: Any) -> bool:
        if node.getClass().getSimpleName() == "Aggregate":
            return True
        children = node.children()
        return any(walk(children.apply(k)) for k in range(children.size()))

    return walk(df._jdf.queryExecution().analyzed())


def _result_types(planned: PlannedQuery) -> list[Optional[str]]:
    """The Flink types kindling knows of a query result's columns (``column_types.known_types``)."""
    known = dict(zip(planned.df.columns, known_types(planned.df)))
    return [known.get(c) for c in planned.columns]


def _timestamp_precision(flink_type: str) -> Optional[int]:
    """p of a TIMESTAMP(p) or TIMESTAMP_LTZ(p) finer digits of which Spark would keep (p < 6); None for other types."""
    match = re.match(r"TIMESTAMP(?:_LTZ)?\((\d)\)", flink_type)
    return int(match.group(1)) if match is not None and int(match.group(1)) < 6 else None


def _with_precision(value: Column, flink_type: str) -> Column:
    """TIMESTAMP(p) with p < 6 holds no finer digits, as in Flink (Spark keeps microseconds)."""
    precision = _timestamp_precision(flink_type)
    if precision is None:
        return value
    if precision == 0:
        return F.date_trunc("second", value)
    unit = 10 ** (6 - precision)
    return F.timestamp_micros(F.floor(F.unix_micros(value) / F.lit(unit)).cast("long") * F.lit(unit))


def _unique_names(names: list[str]) -> list[str]:
    """Flink's names for a result's columns: an expression after a ``*`` is ``EXPR$<position>``, a repeated name gets
    a number (``extra``, ``extra0``), as Calcite does."""
    names = flink_column_names(names)
    seen = set(names)
    out: list[str] = []
    used: set[str] = set()
    for name in names:
        if name in used:
            n = 0
            while f"{name}{n}" in seen or f"{name}{n}" in used:
                n += 1
            name = f"{name}{n}"
        used.add(name)
        out.append(name)
    return out


def _spark_name(name: str) -> str:
    return name


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _safe_uid(uid: str) -> str:
    return uid.replace("/", "_") or "sink"


def _micros(duration: Optional[str], line: int) -> int:
    if duration is None:
        raise SqlError("a window size is missing", line=line, construct="window TVF")
    return int(parse_duration(duration).total_seconds() * 1_000_000)


# --- textual helpers for the outermost SELECT -------------------------------------------------
_CLAUSE_END = ("HAVING", "ORDER", "LIMIT", "WINDOW", "UNION", "EXCEPT", "INTERSECT", "QUALIFY")


def _order_and_limit(text: str, line: int) -> Optional[tuple[str, str]]:
    """A query split before its outermost ORDER BY (or LIMIT): (the query without them, ``ORDER BY .. LIMIT ..``);
    None without either."""
    tokens = tokenize(text, line)
    at = [i for i, (token, depth) in enumerate(with_depth(tokens)) if depth == 0 and token.is_word("ORDER", "LIMIT")]
    if not at:
        return None
    return render(tokens[:at[0]]).strip(), render(tokens[at[0]:]).strip()


def _outer_tokens(text: str) -> list[tuple[Token, int]]:
    """Significant tokens with their parenthesis depth."""
    depth = 0
    out = []
    for token in significant(tokenize(text)):
        if token.is_symbol(")"):
            depth -= 1
        out.append((token, depth))
        if token.is_symbol("("):
            depth += 1
    return out


def _outer_select_and_group(text: str) -> tuple[list[tuple[str, Optional[str]]], list[str]]:
    tokens = _outer_tokens(text)
    select_at = next((k for k, (t, d) in enumerate(tokens) if d == 0 and t.is_word("SELECT")), None)
    if select_at is None:
        return [], []
    from_at = next((k for k, (t, d) in enumerate(tokens) if k > select_at and d == 0 and t.is_word("FROM")), len(tokens))
    group_at = next((k for k, (t, d) in enumerate(tokens) if k > from_at and d == 0 and t.is_word("GROUP")), None)
    select_tokens = [t for t, _ in tokens[select_at + 1:from_at]]
    if select_tokens and select_tokens[0].is_word("DISTINCT", "ALL"):
        select_tokens = select_tokens[1:]
    items = [split_alias(part) for part in split_top_level(select_tokens) if part]
    groups: list[str] = []
    if group_at is not None:
        end = next((k for k, (t, d) in enumerate(tokens) if k > group_at + 1 and d == 0 and t.upper in _CLAUSE_END), len(tokens))
        group_tokens = [t for t, _ in tokens[group_at + 2:end]]
        groups = [" ".join(t.text for t in part) for part in split_top_level(group_tokens) if part]
    return items, groups


def _outer_is_distinct(text: str) -> bool:
    tokens = _outer_tokens(text)
    for k, (token, depth) in enumerate(tokens):
        if depth == 0 and token.is_word("SELECT"):
            return k + 1 < len(tokens) and tokens[k + 1][0].is_word("DISTINCT")
    return False


_GLOBAL_AGGREGATE = re.compile(r"^\s*(COUNT|SUM|MIN|MAX|AVG|STDDEV_POP|STDDEV_SAMP|VAR_POP|VAR_SAMP|LISTAGG|COLLECT|BOOL_AND|BOOL_OR)\s*\(",
                               re.IGNORECASE)


def _normalise(expression: str) -> str:
    return expression.replace("`", "").replace(" ", "").lower()


