"""Nexmark conformance: every query through kindling's SQL, compared with an independent reference.

For a bounded run (``--events``, default 200,000) each query file's SELECT runs through
``StreamEnvironment.execute_sql`` on the ``nexmark`` source; its changelog is applied
(upserts by the result's key, retractions otherwise) and the final rows are compared, as a
multiset, with ``reference.py``'s DuckDB result over the same events materialised to
Parquet. One line per query, then ``conformant=<k> total=<n>``. A query with no reference, an
error, a timeout or a different result counts as not conformant; ``STATUS.md`` says why.

    python benchmarks/nexmark/check.py [--events N] [--queries q0,q5] [--timeout S]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any, Optional, Sequence

os.environ["TZ"] = "UTC"
time.tzset()

sys.path.insert(0, str(Path(__file__).resolve().parent))
import reference  # noqa: E402
import suite  # noqa: E402

ARTIFACTS = suite.ROOT / "artifacts" / "nexmark"


def normalise(value: Any) -> Any:
    """One spelling per value: naive UTC datetimes, exact decimals, floats to 9 significant digits."""
    if isinstance(value, datetime):
        if value.tzinfo is not None:
            value = value.astimezone(timezone.utc).replace(tzinfo=None)
        return value
    if isinstance(value, Decimal):
        return value.normalize()
    if isinstance(value, float):
        return float(f"{value:.9g}")
    return value


def final_rows(changes: Sequence[tuple[str, Any]], upsert_key: Optional[Sequence[int]]) -> Counter:
    """The rows a changelog leaves: by key for an upsert result, as a multiset (retractions) otherwise."""
    if upsert_key:
        by_key: dict[tuple, tuple] = {}
        for kind, row in changes:
            key = tuple(row[i] for i in upsert_key)
            if kind in ("-U", "-D"):
                by_key.pop(key, None)
            else:
                by_key[key] = row
        return Counter(by_key.values())
    rows: Counter = Counter()
    for kind, row in changes:
        if kind in ("-U", "-D"):
            rows[row] -= 1
            if rows[row] <= 0:
                del rows[row]
        else:
            rows[row] += 1
    return rows


@dataclass
class Outcome:
    query: str
    conformant: bool
    detail: str
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)

    def line(self) -> str:
        verdict = "conformant" if self.conformant else "NOT conformant"
        return f"{self.query}: {verdict} ({self.detail}) [{self.seconds:.1f} s]"


def compare(query: str, got: Counter, want: Counter, seconds: float) -> Outcome:
    if got == want:
        return Outcome(query, True, f"{sum(want.values())} rows", seconds)
    missing, unexpected = want - got, got - want
    example = ""
    if missing:
        example += f"; e.g. missing {next(iter(missing))!r}"
    if unexpected:
        example += f"; e.g. unexpected {next(iter(unexpected))!r}"
    return Outcome(query, False, f"expected {sum(want.values())} rows, got {sum(got.values())}: "
                                 f"{sum(missing.values())} missing, {sum(unexpected.values())} unexpected{example}"[:600], seconds)


def run_query(env: Any, query: str, timeout: float) -> tuple[Counter, str]:
    """Run one query file's setup statements and its SELECT through kindling; the final rows and the job's state."""
    setup, select = suite.select_of(suite.query_text(query))
    for statement in setup:
        env.execute_sql(statement)
    result = env.execute_sql(select)
    changes = result.collect_changelog(timeout=timeout)
    client = result.get_job_client()
    state = client.get_job_status() if client is not None else "FINISHED"
    if state not in ("FINISHED",):
        if client is not None:
            client.cancel()
        return Counter(), f"job {state} after {timeout:.0f} s"
    key = result.upsert_key
    columns = list(changes[0][1].__fields__) if changes else []
    key_index = [columns.index(k) for k in key] if key and columns else None
    rows = [(kind, tuple(normalise(v) for v in row)) for kind, row in changes]
    return final_rows(rows, key_index), state


def check(queries: Sequence[str], events: int, timeout: float, spark: Any = None, tps: int = 10_000,
          out: Any = None) -> list[Outcome]:
    """Conformance of each query for a bounded run of ``events`` events; prints one line per query."""
    from kindling.env import StreamEnvironment

    out = out or sys.stdout
    workload = suite.Workload(events=events, tps=tps)
    paths = suite.materialise(workload, ARTIFACTS / f"events-{events}-{tps}")
    checkpoints = Path(tempfile.mkdtemp(prefix="nexmark-check-"))
    env = StreamEnvironment({"execution.checkpointing.interval": "500 ms", "state.checkpoints.dir": str(checkpoints),
                             "parallelism.default": 2, "spark.sql.shuffle.partitions": 4}, spark=spark)
    outcomes = []
    try:
        env.execute_sql(suite.ddl(workload))
        for query in queries:
            started = time.monotonic()
            if query in reference.NO_REFERENCE:
                # still run it: a query without a reference must at least run to its end
                try:
                    got, state = run_query(env, query, timeout)
                    ran = f"ran: {sum(got.values())} rows, job {state}"
                except Exception as exc:
                    ran = f"error: {type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:300]
                outcome = Outcome(query, False, f"no reference: {reference.NO_REFERENCE[query]}; {ran}")
            else:
                want = Counter(tuple(normalise(v) for v in row) for row in reference.expected_rows(query, paths))
                try:
                    got, state = run_query(env, query, timeout)
                    if state != "FINISHED":
                        outcome = Outcome(query, False, state)
                    else:
                        outcome = compare(query, got, want, 0.0)
                except Exception as exc:  # a query kindling cannot run yet is reported, not fatal
                    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                    outcome = Outcome(query, False, f"error: {type(exc).__name__}: {message}"[:600])
                    if os.environ.get("NEXMARK_CHECK_TRACEBACK"):
                        traceback.print_exc()
            outcome.seconds = time.monotonic() - started
            outcomes.append(outcome)
            print(outcome.line(), file=out, flush=True)
    finally:
        shutil.rmtree(checkpoints, ignore_errors=True)
    print(f"conformant={sum(o.conformant for o in outcomes)} total={len(outcomes)}", file=out, flush=True)
    return outcomes


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=200_000, help="events in the bounded run (default 200,000)")
    parser.add_argument("--tps", type=int, default=10_000, help="event rate in events per second of event time (default 10,000)")
    parser.add_argument("--queries", default=",".join(suite.QUERIES), help="comma-separated query names (default: all)")
    parser.add_argument("--timeout", type=float, default=600, help="seconds one query may run (default 600)")
    args = parser.parse_args(argv)
    queries = [q.strip() for q in args.queries.split(",") if q.strip()]
    unknown = [q for q in queries if q not in suite.QUERIES]
    if unknown:
        parser.error(f"unknown queries {unknown}; known: {', '.join(suite.QUERIES)}")
    check(queries, args.events, args.timeout, tps=args.tps)
    return 0


if __name__ == "__main__":
    sys.exit(main())
