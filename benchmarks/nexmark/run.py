"""Nexmark benchmark: events per second through kindling, hand-written PySpark and PyFlink, in one run.

For each query:

- kindling: the suite's query file (``INSERT INTO`` a ``blackhole`` table) through
  ``execute_sql`` over the ``nexmark`` source, bounded to ``--events`` events;
- PySpark: the same query written by hand with DataFrames over the same source (Spark's
  ``kindling_nexmark`` Data Source, the same generator), into Spark's ``noop`` sink with
  ``Trigger.AvailableNow``, where Structured Streaming can express it;
- PyFlink: the query file unchanged on a local PyFlink mini-cluster, reading the same events
  from JSON lines written by the same generator (in its own venv, see ``--pyflink-python``).

Each figure is events / wall seconds from building the job (planning the ``INSERT``, building the
DataFrames) to its end; after two untimed runs of q0 through each (the JVM's warm-up), kindling and PySpark
run each query once untimed (a warm-up; ``--warmups N`` for more) and then
``--rounds`` times (2), taking turns in one JVM, and the fastest timed run of each counts. The table shows the
ratios kindling/PySpark and kindling/PyFlink; the last line is the geometric mean of
kindling/PyFlink over the queries both ran: ``geomean_ratio_vs_pyflink=<x>``, after the lowest
kindling/PySpark ratio: ``min_ratio_vs_pyspark=<x>``.

    python benchmarks/nexmark/run.py [--events N] [--queries q0,q1] [--pyflink-python .venv/pyflink/bin/python]
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

os.environ["TZ"] = "UTC"
time.tzset()

sys.path.insert(0, str(Path(__file__).resolve().parent))
import suite  # noqa: E402

ARTIFACTS = suite.ROOT / "artifacts" / "nexmark"


# -- hand-written PySpark -------------------------------------------------------------------------


def _pyspark_queries() -> dict[str, Callable[[Any, Any, Any], Any]]:
    """Each query as DataFrame code over the (person, auction, bid) streams; None where Spark cannot express it."""
    from pyspark.sql import functions as F

    def q0(person, auction, bid):
        return bid.select("auction", "bidder", "price", "dateTime", "extra")

    def q1(person, auction, bid):
        return bid.select("auction", "bidder", (F.lit(0.908).cast("decimal(4,3)") * F.col("price")).alias("price"), "dateTime", "extra")

    def q2(person, auction, bid):
        return bid.where(F.col("auction") % 123 == 0).select("auction", "price")

    def q3(person, auction, bid):
        a = auction.where(F.col("category") == 10).select("seller", F.col("id").alias("a_id"))
        p = person.where(F.col("state").isin("OR", "ID", "CA")).select("id", "name", "city", "state")
        return a.join(p, a.seller == p.id).select("name", "city", "state", "a_id")

    def q11(person, auction, bid):
        w = F.session_window("dateTime", "10 seconds")
        return bid.groupBy("bidder", w).agg(F.count("*").alias("bid_count")).select(
            "bidder", "bid_count", F.col("session_window.start").alias("starttime"), F.col("session_window.end").alias("endtime"))

    def q14(person, auction, bid):
        import pandas as pd

        def count_char(s):
            return s.fillna("").str.count("c").astype("int64")

        # real annotations (this module's are strings), from which Spark infers a Series -> Series UDF
        count_char.__annotations__ = {"s": pd.Series, "return": pd.Series}
        count_char = F.pandas_udf(count_char, "long")

        price = F.lit(0.908).cast("decimal(4,3)") * F.col("price")
        hour = F.hour("dateTime")
        kind = (F.when((hour >= 8) & (hour <= 18), "dayTime").when((hour <= 6) | (hour >= 20), "nightTime").otherwise("otherTime"))
        return bid.where((price > 1000000) & (price < 50000000)).select(
            "auction", "bidder", price.alias("price"), kind.alias("bidTimeType"), "dateTime", "extra", count_char("extra").alias("c_counts"))

    def q17(person, auction, bid):
        p = F.col("price")
        return bid.groupBy("auction", F.date_format("dateTime", "yyyy-MM-dd").alias("day")).agg(
            F.count("*").alias("total_bids"),
            F.count(F.when(p < 10000, 1)).alias("rank1_bids"),
            F.count(F.when((p >= 10000) & (p < 1000000), 1)).alias("rank2_bids"),
            F.count(F.when(p >= 1000000, 1)).alias("rank3_bids"),
            F.min(p).alias("min_price"), F.max(p).alias("max_price"),
            F.avg(p).cast("long").alias("avg_price"), F.sum(p).alias("sum_price"))

    def q18(person, auction, bid):
        latest = F.max_by(F.struct("price", "channel", "url", "dateTime", "extra"), F.col("dateTime"))
        return bid.groupBy("bidder", "auction").agg(latest.alias("b")).select("auction", "bidder", "b.*")

    def q20(person, auction, bid):
        a = auction.where(F.col("category") == 10).select(
            F.col("id").alias("a_id"), "itemName", "description", "initialBid", "reserve", F.col("dateTime").alias("a_dateTime"),
            "expires", "seller", "category", F.col("extra").alias("a_extra"))
        return bid.join(a, bid.auction == a.a_id).drop("a_id")

    def q21(person, auction, bid):
        pattern = "(&|^)channel_id=([^&]*)"
        channel = F.lower("channel")
        extracted = F.when(F.col("url").rlike(pattern), F.regexp_extract("url", pattern, 2))
        channel_id = (F.when(channel == "apple", "0").when(channel == "google", "1").when(channel == "facebook", "2")
                      .when(channel == "baidu", "3").otherwise(extracted))
        return bid.where(extracted.isNotNull() | channel.isin("apple", "google", "facebook", "baidu")).select(
            "auction", "bidder", "price", "channel", channel_id.alias("channel_id"))

    def q22(person, auction, bid):
        parts = F.split("url", "/")
        return bid.select("auction", "bidder", "price", "channel", F.get(parts, 3).alias("dir1"), F.get(parts, 4).alias("dir2"),
                          F.get(parts, 5).alias("dir3"))

    return {"q0": q0, "q1": q1, "q2": q2, "q3": q3, "q11": q11, "q14": q14, "q17": q17, "q18": q18, "q20": q20,
            "q21": q21, "q22": q22}


# Why the others have no hand-written PySpark version.
PYSPARK_CANNOT = {
    "q4": "an aggregation over a join's aggregation (chained updating aggregations)",
    "q5": "a join of two window aggregations of the same stream, one over the other's result",
    "q7": "a join of a stream with its own window aggregation",
    "q8": "a join of two window aggregations",
    "q9": "ROW_NUMBER over a join (streaming Top-N)",
    "q12": "processing-time windows",
    "q15": "COUNT(DISTINCT) in a streaming aggregation",
    "q16": "COUNT(DISTINCT) in a streaming aggregation",
    "q19": "ROW_NUMBER (streaming Top-N)",
}


def run_pyspark(spark: Any, query: str, workload: suite.Workload, checkpoints: Path) -> Optional[float]:
    """Seconds the hand-written query took over ``workload``'s events, or None when it has none."""
    from pyspark.sql import functions as F

    from kindling.connectors.nexmark import NEXMARK_SCHEMA

    build = _pyspark_queries().get(query)
    if build is None:
        return None
    # The clock starts before the query is built, as kindling's and PyFlink's start before they plan the INSERT.
    started = time.monotonic()
    events = (spark.readStream.format("kindling_nexmark").schema(NEXMARK_SCHEMA).options(**workload.source_options())
              .option("scan.parallelism", "2").load().withWatermark("dateTime", "4 seconds"))
    person = events.where(F.col("event_type") == 0).select("person.id", "person.name", "person.emailAddress", "person.creditCard",
                                                          "person.city", "person.state", "dateTime", "person.extra")
    auction = events.where(F.col("event_type") == 1).select("auction.id", "auction.itemName", "auction.description",
                                                           "auction.initialBid", "auction.reserve", "dateTime", "auction.expires",
                                                           "auction.seller", "auction.category", "auction.extra")
    bid = events.where(F.col("event_type") == 2).select("bid.auction", "bid.bidder", "bid.price", "bid.channel", "bid.url",
                                                       "dateTime", "bid.extra")
    df = build(person, auction, bid)
    mode = "update" if query in ("q17", "q18") else "append"
    stream = (df.writeStream.format("noop").outputMode(mode).trigger(availableNow=True)
              .option("checkpointLocation", tempfile.mkdtemp(prefix=f"pyspark-{query}-", dir=checkpoints)).start())
    stream.awaitTermination()
    return time.monotonic() - started


# -- kindling and PyFlink -------------------------------------------------------------------------


_RUNS = itertools.count(1)
_SET_UP: set[str] = set()


def run_kindling(env: Any, query: str, timeout: float) -> float:
    """Seconds the suite's query file took through kindling's SQL (INSERT INTO a blackhole table)."""
    text = suite.query_text(query)
    setup, select = suite.select_of(text)
    # a job name of its own: a second run of a query must not resume the first one's checkpoint
    env.execute_sql(f"SET 'pipeline.name' = 'nexmark-{query}-{next(_RUNS)}'")
    if query not in _SET_UP:  # the sink table, views and functions: once per session, for every round
        for statement in setup:
            env.execute_sql(statement)
        _SET_UP.add(query)
    sink = suite.strip_comments(text).split("INSERT INTO", 1)[1].split()[0]
    started = time.monotonic()
    result = env.execute_sql(f"INSERT INTO {sink} {select}")
    state = result.wait(timeout)
    elapsed = time.monotonic() - started
    if state != "FINISHED":
        client = result.get_job_client()
        if client is not None:
            client.cancel()
        raise RuntimeError(f"job {state} after {timeout:.0f} s")
    return elapsed


def run_pyflink(python: str, query: str, events_json: Path, timeout: float) -> float:
    """Seconds PyFlink took (job submission to end), run in its own interpreter."""
    command = [python, str(suite.HERE / "pyflink_job.py"), "--events-json", str(events_json), "--ddl", str(suite.HERE / "ddl.sql"),
               "--query", str(suite.HERE / "queries" / f"{query}.sql"), "--parallelism", "2"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, start_new_session=True)
    for line in done.stdout.splitlines():
        if line.startswith("PYFLINK_RESULT "):
            return json.loads(line[len("PYFLINK_RESULT "):])["seconds"]
    error = [line for line in (done.stderr + done.stdout).splitlines() if "Exception" in line or "Error" in line]
    raise RuntimeError((error[-1] if error else f"exit code {done.returncode}")[:300])


def _rate(events: int, seconds: Optional[float]) -> str:
    return "-" if seconds is None else f"{events / seconds:,.0f}"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--tps", type=int, default=10_000_000,
                        help="event rate in events per second of event time (the suite's default workload: 10M)")
    parser.add_argument("--queries", default=",".join(suite.QUERIES))
    parser.add_argument("--pyflink-python", default=str(suite.ROOT / ".venv" / "pyflink" / "bin" / "python"))
    parser.add_argument("--timeout", type=float, default=1200)
    parser.add_argument("--no-warmup", dest="warmup", action="store_false",
                        help="no untimed runs (of q0 first, and of each query before its timed rounds)")
    parser.add_argument("--warmups", type=int, default=1, help="untimed runs of each query through each side before "
                        "its timed rounds (1; the JVM compiles a query's code over its first few runs)")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each query through kindling and through PySpark, "
                        "taking turns; the fastest of each counts")
    args = parser.parse_args(argv)
    queries = [q.strip() for q in args.queries.split(",") if q.strip()]
    workload = suite.Workload(events=args.events, tps=args.tps)

    from kindling.env import StreamEnvironment

    checkpoints = Path(tempfile.mkdtemp(prefix="nexmark-bench-"))
    env = StreamEnvironment({"execution.checkpointing.interval": "1 s", "state.checkpoints.dir": str(checkpoints),
                             "parallelism.default": 2, "spark.sql.shuffle.partitions": 4, "kindling.log.level": "ERROR"})
    env.execute_sql(suite.ddl(workload))
    pyflink = Path(args.pyflink_python)
    events_json = None
    if pyflink.exists():
        events_json = suite.write_flink_json(workload, ARTIFACTS / f"events-{args.events}-{args.tps}.json")
    else:
        print(f"PyFlink not found at {pyflink}: run `make nexmark-bench` (it creates .venv/pyflink)", file=sys.stderr)

    if args.warmup:
        # A fresh JVM compiles the paths every query shares (the source's Arrow reading, the scan, the sink) during the
        # session's first large jobs: the first query's runs were its slowest on both sides (q0, 1M events: kindling
        # 2.74 and 2.59 s, then 1.63 s three runs later). Two untimed q0 runs each, taking turns, before any query.
        for _ in range(2):
            run_kindling(env, "q0", args.timeout)
            run_pyspark(env.spark, "q0", workload, checkpoints)
    rows = []
    for query in queries:
        figures: dict[str, Any] = {}
        notes = []
        timed: dict[str, list[str]] = {"kindling": [], "pyspark": []}
        # kindling and PySpark share one JVM: whichever runs a query's shape first pays for compiling its code, and
        # the first run after another query (or after PyFlink's job) is the slowest of a side's runs. So each query
        # first runs once untimed through both (warm-up), then they take turns in a balanced order (kindling first in
        # odd rounds, PySpark first in even ones: k p p k ...) and each one's fastest round counts. Without the
        # warm-up, kindling's first turn was the cold one in every query (q0, 1M events: 1.25-1.36 s against its
        # 1.06-1.09 in later turns) and only PySpark had two warm turns to take the faster of. PyFlink starts a JVM
        # per job.
        pair = [("kindling", lambda query=query: run_kindling(env, query, args.timeout)),
                ("pyspark", lambda query=query: run_pyspark(env.spark, query, workload, checkpoints))]
        turns = [("warm-up " + system, run) for _ in range(args.warmups) for system, run in pair] if args.warmup else []
        turns += [turn for n in range(args.rounds) for turn in (pair if n % 2 == 0 else pair[::-1])]
        turns.append(("pyflink", lambda query=query: run_pyflink(str(pyflink), query, events_json, args.timeout) if events_json else None))
        for system, run in turns:
            warm_up = system.startswith("warm-up ")
            side = system.removeprefix("warm-up ")
            if side in figures and figures[side] is None:
                continue  # failed, or cannot be expressed: once is enough
            try:
                seconds = run()
            except Exception as exc:  # reported in the table, not fatal
                seconds = None
                notes.append(f"{side}: {str(exc).strip().splitlines()[0][:160] if str(exc).strip() else type(exc).__name__}")
            if side in timed:
                timed[side].append("-" if seconds is None else f"{'(' if warm_up else ''}{seconds:.2f}{')' if warm_up else ''}")
            if warm_up and seconds is not None:
                continue
            figures[side] = seconds if figures.get(side) is None or seconds is None else min(figures[side], seconds)
        if figures["pyspark"] is None and query in PYSPARK_CANNOT:
            notes.append("pyspark: Structured Streaming cannot express " + PYSPARK_CANNOT[query])
        rows.append((query, figures, notes))
        k, s, f = (figures[x] for x in ("kindling", "pyspark", "pyflink"))
        print(f"{query}: kindling {_rate(args.events, k)} ev/s, pyspark {_rate(args.events, s)} ev/s, pyflink {_rate(args.events, f)} ev/s"
              f" (seconds per run, warm-up in brackets: kindling {' '.join(timed['kindling'])}, pyspark {' '.join(timed['pyspark'])})"
              + ("".join(f"; {n}" for n in notes)), file=sys.stderr, flush=True)
    shutil.rmtree(checkpoints, ignore_errors=True)

    print(f"\nNexmark, {args.events:,} events (rate {args.tps:,}/s of event time), events per second (wall time, from building the job to its end)\n")
    header = f"{'query':<6}{'kindling':>12}{'pyspark':>12}{'pyflink':>12}{'k/pyspark':>11}{'k/pyflink':>11}"
    print(header)
    print("-" * len(header))
    ratios = []
    for query, figures, _notes in rows:
        k, s, f = (figures[x] for x in ("kindling", "pyspark", "pyflink"))
        vs_spark = f"{s / k:.2f}" if k and s else "-"
        vs_flink = f"{f / k:.2f}" if k and f else "-"
        if k and f:
            ratios.append(f / k)
        print(f"{query:<6}{_rate(args.events, k):>12}{_rate(args.events, s):>12}{_rate(args.events, f):>12}{vs_spark:>11}{vs_flink:>11}")
    for query, _figures, notes in rows:
        for note in notes:
            print(f"  {query} {note}")
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios)) if ratios else float("nan")
    vs_pyspark = [figures["pyspark"] / figures["kindling"] for _q, figures, _n in rows if figures["kindling"] and figures["pyspark"]]
    print(f"min_ratio_vs_pyspark={min(vs_pyspark) if vs_pyspark else float('nan'):.3f}")
    print(f"geomean_ratio_vs_pyflink={geomean:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
