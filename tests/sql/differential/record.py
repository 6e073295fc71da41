"""Record Flink's answers for the differential corpus: ``make sql-reference`` (PyFlink 2.3's venv).

Runs every corpus entry on PyFlink (in streaming mode, or batch mode for the entries marked so) over the bounded JSON tables of
:mod:`tables` (parallelism 1, UTC), applies each result's changelog (+I/+U add a row, -U/-D remove
one; for an entry with an ``upsert_key``, a change replaces the row with the same key) to a final
multiset, and writes ``reference.json``: per entry the column names, Flink's column
types and the normalised rows, or Flink's own error when Flink rejects the query.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402
import normalise  # noqa: E402
import python_functions  # noqa: E402
import tables  # noqa: E402

REFERENCE = HERE / "reference.json"
CONCURRENT_JOBS = 6


def main() -> int:
    from pyflink.common import Configuration, RowKind
    from pyflink.table import EnvironmentSettings, TableEnvironment

    only = set(sys.argv[1:])
    tables.write_data()
    config = Configuration()
    config.set_string("parallelism.default", "1")
    config.set_string("taskmanager.numberOfTaskSlots", str(CONCURRENT_JOBS))  # several queries run at once
    config.set_string("table.local-time-zone", "UTC")
    t_env = TableEnvironment.create(EnvironmentSettings.new_instance().in_streaming_mode().with_configuration(config).build())
    b_env = TableEnvironment.create(EnvironmentSettings.new_instance().in_batch_mode().with_configuration(config).build())
    for statement in tables.ddl():
        t_env.execute_sql(statement)
        b_env.execute_sql(statement)
    for statement in tables.streaming_views():
        t_env.execute_sql(statement)
    python_functions.register(t_env.create_temporary_system_function)
    python_functions.register(b_env.create_temporary_system_function)
    reference = json.loads(REFERENCE.read_text()) if REFERENCE.exists() and only else {}
    if not only:
        REFERENCE.write_text("{}\n")
    started = time.monotonic()

    def run(sql: str, mode: str = "streaming") -> tuple[list[str], list[str], list[list]]:
        return finish((b_env if mode == "batch" else t_env).execute_sql(sql))

    def finish(result, upsert_key: tuple[str, ...] = ()) -> tuple[list[str], list[str], list[list]]:
        """Collect a submitted query: its columns, Flink's types and the changelog applied to a multiset
        (by ``upsert_key`` for a result Flink sends as upserts)."""
        schema = result.get_resolved_schema()
        columns = list(schema.get_column_names())
        types = [str(t) for t in schema.get_column_data_types()]
        key = [columns.index(c) for c in upsert_key]
        final: list = []
        before = None
        with result.collect() as changes:
            for row in changes:
                values, kind = list(row._values), row.get_row_kind()
                if kind == RowKind.UPDATE_AFTER and before != RowKind.UPDATE_BEFORE and not key:
                    raise RuntimeError(f"an upsert changelog (+U {values} without -U): give the entry its upsert_key ({columns})")
                if key:
                    final = [f for f in final if [f[k] for k in key] != [values[k] for k in key]]
                    if kind in (RowKind.INSERT, RowKind.UPDATE_AFTER):
                        final.append(values)
                elif kind in (RowKind.UPDATE_BEFORE, RowKind.DELETE):
                    final.remove(values)
                else:
                    final.append(values)
                before = kind
        return columns, types, final

    def record(entry: corpus.Entry, outcome) -> None:
        if isinstance(outcome, Exception):  # Flink rejects it: recorded, and the entry is left out of the comparison
            message = [line.strip(": \t") for line in str(outcome).strip().splitlines()]
            # Py4J's first line only names the call ("An error occurred while calling o63.executeSql."): Flink's own
            # exception is the first Java one after it
            java = [line for line in message if line.startswith(("org.apache.flink", "java.")) and "Exception" in line]
            error = java[0] if java else message[0] if message else type(outcome).__name__
            reference[entry.id] = {"sql": entry.sql, "source": entry.source, "flink_error": error}
        else:
            columns, types, final = outcome
            reference[entry.id] = {"sql": entry.sql, "source": entry.source, "columns": columns, "types": types,
                                   "rows": normalise.rows(final)}
        REFERENCE.write_text(json.dumps(dict(sorted(reference.items())), indent=1, sort_keys=True) + "\n")
        print(f"{time.monotonic() - started:6.1f} {entry.id}: "
              f"{'error' if 'flink_error' in reference[entry.id] else len(reference[entry.id]['rows'])}",
              flush=True)

    def run_expressions(batch: list) -> None:
        """Evaluate expression entries in one query; a batch Flink rejects is split until the culprit is alone."""
        if len(batch) == 1:
            try:
                record(batch[0], run(batch[0].sql, batch[0].mode))
            except Exception as exc:
                record(batch[0], exc)
            return
        try:
            columns, types, final = run(corpus.expression_batch(batch), batch[0].mode)
        except Exception:
            half = len(batch) // 2
            run_expressions(batch[:half])
            run_expressions(batch[half:])
            return
        for i, entry in enumerate(batch, start=1):
            record(entry, (["order_id", "v"], [types[0], types[i]], [[row[0], row[i]] for row in final]))

    selected = [e for e in corpus.CORPUS if not only or e.id in only]
    for mode in ("streaming", "batch"):  # a batch of expressions runs in one mode
        expressions = [e for e in selected if e.expression and e.mode == mode]
        for k in range(0, len(expressions), 40):
            run_expressions(expressions[k:k + 40])
    pending: list = []  # queries submitted to Flink, collected in order while the next ones run
    for entry in [e for e in selected if not e.expression]:
        try:
            pending.append((entry, (b_env if entry.mode == "batch" else t_env).execute_sql(entry.sql)))
        except Exception as exc:
            record(entry, exc)
        while len(pending) >= CONCURRENT_JOBS:
            waiting, result = pending.pop(0)
            try:
                record(waiting, finish(result, waiting.upsert_key))
            except Exception as exc:
                record(waiting, exc)
    for waiting, result in pending:
        try:
            record(waiting, finish(result, waiting.upsert_key))
        except Exception as exc:
            record(waiting, exc)
    REFERENCE.write_text(json.dumps(dict(sorted(reference.items())), indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(reference)} entries in {time.monotonic() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
