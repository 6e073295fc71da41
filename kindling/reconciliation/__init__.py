"""Reconciliation: prove a streaming job's output with a batch run of the same pipeline.

A streaming SQL job's checkpoint knows exactly which input each micro-batch read (Spark's offset log) and
which watermark it ran with; its sink knows what it committed. :func:`reconcile` runs the job's own SQL
script again in batch mode over exactly the input up to a committed micro-batch, reads back the sink's
committed output up to the same micro-batch, and compares the two as multisets:

* a window aggregation's rows are compared for the windows the checkpoint's watermark had closed (later
  windows are still open in the stream, so they are counted, not compared);
* rows the streaming job dropped as late (their window had closed when they arrived) are taken out of the
  batch run and reported as *dropped late*, not as a mismatch;
* the rest is *matched*, *missing*, *extra* or *differing* (same key, other values).

Example::

    kindling sql -f clicks.sql                 # the streaming job, stopped or still running
    kindling reconcile --sql clicks.sql        # MATCH and exit 0, or the differences and exit 1

or from Python: ``print(reconcile("clicks.sql"))``.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Optional, Sequence

from kindling.options import OptionError
from kindling.reconciliation.checkpoint import CheckpointError, QueryCheckpoint
from kindling.reconciliation.compare import compare
from kindling.reconciliation.report import Report, SinkReport
from kindling.reconciliation.sink_output import SinkNotReadable, committed_rows, output_cut

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from kindling.sql import ddl
    from kindling.sql.catalog import CatalogTable
    from kindling.sql.session import SqlSession

__all__ = ["CheckpointError", "ReconcileError", "Report", "SinkNotReadable", "reconcile", "reconcile_program"]


class ReconcileError(ValueError):
    """The job cannot be reconciled as asked; the message says what to change."""


def reconcile(sql_file: str, target: Optional[str] = None, defines: Optional[Mapping[str, str]] = None,
              batch_id: Optional[int] = None, examples: int = 5, spark: Optional["SparkSession"] = None) -> Report:
    """Reconcile the streaming job(s) of a SQL script with a batch run of the same script.

    ``target`` is the job's checkpoint directory (``<state.checkpoints.dir>/<job name>``), one query's
    checkpoint inside it, or a job name; without it, each INSERT job of the script is found where the script
    itself would put its checkpoint. ``batch_id`` picks a committed micro-batch (default: the last one).
    ``defines`` are the ``-D`` options the job ran with.
    """
    from kindling.env import StreamEnvironment
    from kindling.sql import ddl
    from kindling.sql.session import read_nothing
    from kindling.sql.statements import split_statements

    started = time.monotonic()
    path = Path(sql_file)
    if not path.is_file():
        raise ReconcileError(f"the SQL script {path} does not exist")
    script = path.read_text()
    sys.path.insert(0, str(path.resolve().parent))  # CREATE FUNCTION ... AS 'module.fn' next to the script
    config = dict(defines or {})
    config["execution.runtime-mode"] = "batch"
    env = StreamEnvironment(config, spark=spark)
    session = env.sql_session()
    session.input_ranges = read_nothing  # views planned while the script's DDL runs read nothing yet
    jobs: list[tuple[str, list[ddl.Insert]]] = []
    statement_set: Optional[list[ddl.Insert]] = None
    for statement in split_statements(script):
        parsed = ddl.parse_statement(statement)
        if isinstance(parsed, ddl.SetOption) and (parsed.key or "").lower() == "execution.runtime-mode":
            continue
        if isinstance(parsed, ddl.BeginStatementSet):
            statement_set = []
        elif isinstance(parsed, ddl.EndStatementSet):
            jobs.append(_job(session, statement_set or []))
            statement_set = None
        elif isinstance(parsed, ddl.Insert):
            if statement_set is not None:
                statement_set.append(parsed)
            else:
                jobs.append(_job(session, [parsed]))
        elif isinstance(parsed, ddl.StatementSet):
            jobs.append(_job(session, parsed.inserts))
        elif isinstance(parsed, (ddl.Query, ddl.Explain)):
            continue  # a SELECT's rows go to a client, not to a sink: nothing to reconcile
        else:
            session.execute_statement(statement)
    if not jobs:
        raise ReconcileError(f"{sql_file} has no INSERT INTO: there is no sink output to reconcile")
    jobs = _chosen(jobs, target, session)
    reports = [report for job_name, inserts in jobs for report in _reconcile_job(session, job_name, inserts, target, batch_id, examples)]
    return Report(", ".join(job for job, _ in jobs), reports, time.monotonic() - started, examples)


def reconcile_program(program: str, args: Sequence[str] = (), target: Optional[str] = None,
                      defines: Optional[Mapping[str, str]] = None, batch_id: Optional[int] = None, examples: int = 5) -> Report:
    """Reconcile the streaming job(s) of a Table API program with a batch re-run of the same program.

    The program runs again as ``__main__`` with ``args`` (as ``kindling run program.py args...`` ran it), its
    environments in batch mode with ``defines`` imposed; each INSERT job it starts (``execute_insert``, a statement
    set, ``execute_sql("INSERT ...")``) is reconciled there, against the checkpoint and sink of the streaming run,
    instead of writing its sink. ``target`` is as for :func:`reconcile`. A DataStream pipeline is refused by name.

    >>> print(reconcile_program("spend_report.py", defines={"state.checkpoints.dir": "/data/checkpoints"}))
    """
    from kindling.program import execute_program
    from kindling.runtime.rerun import Rerun, RerunRefused
    from kindling.sql.session import read_nothing

    started = time.monotonic()
    if not Path(program).is_file():
        raise ReconcileError(f"the program {program} does not exist")
    reports: list[SinkReport] = []
    seen: list[str] = []
    chosen: list[str] = []

    def take(session: "SqlSession", inserts: list["ddl.Insert"], job_name: str) -> None:
        seen.append(job_name)
        if target is not None and not Path(target).is_dir() and job_name != target:
            return
        if target is not None and Path(target).is_dir() and chosen:
            raise ReconcileError(f"the program runs more than one job ({', '.join(seen)}); a checkpoint path names one: give "
                                 "the job's name instead, or no target to reconcile them all")
        chosen.append(job_name)
        try:
            reports.extend(_reconcile_job(session, job_name, inserts, target, batch_id, examples))
        finally:
            session.input_ranges = read_nothing

    saved_argv, saved_path = list(sys.argv), list(sys.path)
    try:
        with Rerun(take, dict(defines or {})):
            execute_program(program, args)
    except RerunRefused as exc:
        raise ReconcileError(f"{program}: {exc}") from None
    except SystemExit as exc:
        if exc.code not in (None, 0):
            raise ReconcileError(f"{program} exited with status {exc.code} before its jobs were reconciled") from None
    finally:
        sys.argv[:], sys.path[:] = saved_argv, saved_path
    if not seen:
        raise ReconcileError(f"{program} started no INSERT job: there is no sink output to reconcile")
    if not chosen:
        raise ReconcileError(f"the program has no job named '{target}'; its jobs: {', '.join(seen)}")
    return Report(", ".join(chosen), reports, time.monotonic() - started, examples)


def _reconcile_job(session: "SqlSession", job_name: str, inserts: list["ddl.Insert"], target: Optional[str],
                   batch_id: Optional[int], examples: int) -> list[SinkReport]:
    """Each sink of one job, compared at the checkpoint its streaming run left."""
    root = _root(target, job_name, session)
    reports = []
    for index, insert in enumerate(inserts):
        uid = _safe_uid(f"{index}-{insert.table}" if len(inserts) > 1 else insert.table)
        query = root if (root / "offsets").is_dir() else root / uid
        if not query.is_dir():
            raise ReconcileError(f"job '{job_name}' has no checkpoint for its sink '{insert.table}' in {query}: "
                                 "has it run with this pipeline and these options (state.checkpoints.dir, pipeline.name)?")
        reports.append(_reconcile_insert(session, insert, QueryCheckpoint(query), batch_id, examples))
    return reports


def _job(session: "SqlSession", inserts: list["ddl.Insert"]) -> tuple[str, list["ddl.Insert"]]:
    """The job an INSERT (or a statement set) ran as, named as the streaming run named it."""
    return session._job_name("insert-into_" + ",".join(i.table for i in inserts)), inserts


def _chosen(jobs: list[tuple[str, list["ddl.Insert"]]], target: Optional[str], session: "SqlSession") -> list[tuple[str, list["ddl.Insert"]]]:
    if target is None or Path(target).is_dir():
        if target is not None and len(jobs) > 1:
            raise ReconcileError(f"the script runs {len(jobs)} jobs ({', '.join(j for j, _ in jobs)}); a checkpoint path "
                                 "names one: give the job's name instead, or no target to reconcile them all")
        return jobs
    named = [job for job in jobs if job[0] == target]
    if not named:
        raise ReconcileError(f"the script has no job named '{target}'; its jobs: {', '.join(j for j, _ in jobs)}")
    return named


def _root(target: Optional[str], job_name: str, session: "SqlSession") -> Path:
    if target is not None and Path(target).is_dir():
        return Path(target).resolve()
    root = session.env.checkpoint_root(job_name)
    if not root.is_dir():
        raise ReconcileError(f"job '{job_name}' has no checkpoint in {root}: run it first, or give its checkpoint path")
    return root


def _safe_uid(uid: str) -> str:
    from kindling.sql.session import _safe_uid as safe

    return safe(uid)


def _reconcile_insert(session: "SqlSession", insert: "ddl.Insert", checkpoint: QueryCheckpoint, batch_id: Optional[int],
                      examples: int) -> SinkReport:
    import pyarrow as pa

    from kindling.sql.group_aggregate import find_group_aggregation

    table = session.catalog.table(insert.table, line=insert.line, construct="INSERT")
    try:
        last, cut = output_cut(session, table, checkpoint.path, checkpoint.last_committed, batch_id)  # before the job moves on
    except OptionError as exc:
        raise ReconcileError(str(exc)) from None
    upto = last if batch_id is None else batch_id
    if upto > last:
        raise ReconcileError(f"micro-batch {upto} of {checkpoint.path} is not committed (the last committed one is {last})")
    micro_batch = checkpoint.micro_batch(upto)
    claimed: dict[int, str] = {}
    input_range: dict[str, Any] = {}
    notes: list[str] = []

    def ranges(table: "CatalogTable") -> list[dict[str, Any]]:
        index = _source_index(table, micro_batch.ends, claimed)
        found, purged_before = checkpoint.input_range(index, upto)
        end = found[-1]["end"] if found else None
        input_range[table.name] = f"({table.connector}): {len(found)} micro-batches, up to offsets {json.dumps(end)}"
        purged = (f"Spark's offset log no longer holds the micro-batches before {purged_before}: rows they read are "
                  "not checked for lateness")
        if purged_before is not None and purged not in notes:
            notes.append(purged)
        return found

    session.input_ranges = ranges
    session.late_rows, session.behind_watermark = [], []
    planned, table = session._plan_insert(insert)
    batch = planned.df.toArrow()
    open_windows = 0
    window_end, group_window = planned.window_end, False
    if window_end is None:
        window_end, group_window = group_window_end(planned.df)
    if window_end is None and group_window:
        raise ReconcileError(f"INSERT INTO {table.name} groups by a group window whose end it does not write: reconciliation "
                             "compares the windows the checkpoint's watermark had closed, known by their end; write TUMBLE_END(...) "
                             "(HOP_END, SESSION_END; the Table API's w.end) too, or use a window TVF")
    if window_end is not None:  # windows the checkpoint's watermark had not closed are not in the stream yet
        ends = batch.column(window_end).cast(pa.int64()).to_pylist()  # microseconds since the epoch
        closed = [end is not None and end <= micro_batch.watermark_ms * 1000 for end in ends]
        open_windows = closed.count(False)
        batch = batch.filter(pa.array(closed))
    batch_rows = [tuple(row.values()) for row in batch.to_pylist()]
    late_count, late_examples = 0, []
    for _, late, cached in session.late_rows:
        late_count += late.count()
        visible = [c for c in late.columns if not c.startswith("__kindling_") and c != "window_time"]
        late_examples += [{c: row[c] for c in visible} for row in late.select(*[f"`{c}`" for c in visible]).limit(examples).collect()]
        cached.unpersist()
    if not session.late_rows:  # no window TVF classified late rows: say whether there were rows it could have concerned
        for name, behind in dict(session.behind_watermark).items():
            count = behind.count()
            if count:
                notes.append(f"{count} rows of '{name}' arrived behind the watermark; the query has no window TVF, so they "
                             "were not checked for lateness: if a group window or a join dropped them in the stream, their "
                             "results differ here")
    session.input_ranges = None  # reading the sink back reads it whole
    if table.connector != "filesystem" and upto < last and cut is None:
        notes.append(f"the '{table.connector}' sink is read as it stands, with what micro-batches after {upto} wrote: "
                     f"compare at the last committed micro-batch ({last}) for an exact cut")
    try:
        stream_rows, sink_notes = committed_rows(session, table, checkpoint.path, upto, cut)
    except SinkNotReadable as exc:
        raise ReconcileError(str(exc)) from None
    key = list(table.primary_key) or None
    if key is None:
        query, line = _defining_query(session, insert)
        aggregation = find_group_aggregation(query, line, window=True)
        if aggregation is not None:
            key = aggregation.upsert_key(insert.columns or planned.columns)
    comparison = compare(planned.columns, stream_rows, batch_rows, key)
    return SinkReport(table.name, table.connector, str(checkpoint.path), upto, micro_batch.watermark_ms, input_range, comparison,
                      open_windows, late_count, late_examples, notes + sink_notes)


def group_window_end(df: Any) -> tuple[Optional[str], bool]:
    """The output column that is a group window's end (``TUMBLE_END(...)``, the Table API's ``w.end``), if one is, and
    whether the query groups by a group window at all.

    A window TVF's window_end is marked by the planner (``PlannedQuery.window_end``); a group window is Spark's
    ``window()`` struct, whose ``.end`` only Spark's plan shows: the root operator's output expression that reads
    nothing but it (precision casts aside)."""
    root = str(df._jdf.queryExecution().optimizedPlan().toString()).splitlines()[0]
    grouping = re.match(r"Aggregate \[([^\]]*)\]", root)
    grouped = grouping is not None and re.search(r"\b(?:session_)?window#\d+", grouping.group(1)) is not None
    for expression, name in re.findall(r"(?:\[|, )([^\[\],]*?(?:session_)?window#\d+\.end[^\[\],]*?) AS ([^\s#,]+)#\d+", root):
        if len(re.findall(r"#\d+", expression)) == 1 and name in df.columns:
            return name, grouped
    return None, grouped


def _defining_query(session: "SqlSession", insert: "ddl.Insert") -> tuple[str, int]:
    """The query an INSERT writes, seen through views it reads whole (``execute_insert`` of a Table API table
    inserts ``SELECT * FROM`` the table's view)."""
    from kindling.sql.catalog import CatalogView

    query, line = insert.query, insert.query_line
    for _ in range(32):
        match = re.fullmatch(r"\s*SELECT\s+\*\s+FROM\s+`?([\w.$]+)`?\s*;?\s*", query, re.IGNORECASE)
        view = session.catalog.objects.get(match.group(1)) if match else None
        if not isinstance(view, CatalogView) or not view.query or view.column_names:
            break
        query, line = view.query, view.query_line
    return query, line


def _source_index(table: "CatalogTable", ends: tuple[Optional[dict[str, Any]], ...], claimed: dict[int, str]) -> int:
    """Which of the query's sources (offset log lines) reads ``table``."""
    if table.connector in ("kafka", "upsert-kafka"):
        topics = [t.strip() for t in table.options.get("topic", "").split(";") if t.strip()]
        pattern = table.options.get("topic-pattern")
        for index, end in enumerate(ends):
            partitions = (end or {}).get("partitions")
            if not isinstance(partitions, dict) or not partitions:
                continue
            if all(t in topics or (pattern and re.fullmatch(pattern, t)) for t in partitions):
                claimed[index] = table.name
                return index
    elif table.connector in ("kinesis", "kinesis-legacy"):
        from kindling.connectors.kinesis.options import source_config

        stream = source_config(table.connector_options(), table.connector).stream
        for index, end in enumerate(ends):
            if isinstance(end, dict) and end.get("stream") == stream and index not in claimed:
                claimed[index] = table.name
                return index
    elif table.connector not in ("filesystem",):
        raise ReconcileError(f"table '{table.name}': the input of connector '{table.connector}' cannot be read again over "
                             "a streaming run's range; reconcilable sources: kafka, kinesis, filesystem")
    free = [i for i in range(len(ends)) if claimed.get(i, table.name) == table.name]
    if len(ends) == 1 or (len(free) == 1 and table.connector != "kafka"):
        claimed[free[0]] = table.name
        return free[0]
    raise ReconcileError(f"table '{table.name}' ({table.connector}): the checkpoint's {len(ends)} sources cannot be told apart")
