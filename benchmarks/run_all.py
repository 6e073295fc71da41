"""Every benchmark, one after another, as one table: workload, kindling, reference, ratio, target.

Runs each benchmark script in its own process (its own Spark JVM and local servers), reads the
kindling rate it printed and its last ``ratio=<kindling/reference>`` line, and prints the table;
writes it to ``artifacts/benchmarks.md`` with the machine's core count, load average and commit.
A benchmark that fails or needs what is missing (PyFlink for Nexmark and async I/O) gets a row saying so.

    python benchmarks/run_all.py [--only stateful,kafka_source] [--quick]

``--quick`` runs every benchmark on a small input to check that the table builds (minutes, not an
hour); its figures are not the benchmarks' figures.
"""

from __future__ import annotations

import argparse
import datetime
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence

ROOT = Path(__file__).resolve().parents[1]
PYFLINK = ROOT / ".venv" / "pyflink" / "bin" / "python"
_RATE = re.compile(r"([\d,]+(?:\.\d+)?) (rows|records|docs|ev)/s")


@dataclass(frozen=True)
class Benchmark:
    name: str
    workload: str
    script: str
    args: Sequence[str]
    quick_args: Sequence[str]
    kindling_line: str  # the start of the line holding kindling's rate
    reference_line: str  # the start of the line(s) holding the reference's rate (the fastest counts)
    target: str


BENCHMARKS: List[Benchmark] = [
    Benchmark("stateful", "KeyedProcessFunction running average, 2M records / 100k keys (vs groupBy.avg)",
              "stateful.py", [], ["--records", "100000", "--keys", "5000"], "keyed process function", "built-in aggregation", ">= 0.5"),
    Benchmark("stateful_selector", "The same, keyed by a Python function (key_by(lambda r: r.key))",
              "stateful.py", ["--key-selector"], ["--records", "100000", "--keys", "5000", "--key-selector"],
              "keyed process function", "built-in aggregation", "-"),
    Benchmark("keyed_runner", "The keyed operator's Python per record without Spark, 240k records (vs a hand-written loop)",
              "keyed_runner.py", [], ["--groups", "4", "--repeat", "2"], "kindling keyed runner", "hand-written Python loop", "-"),
    Benchmark("kafka_source", "Kafka source, 1M JSON records (vs confluent-kafka loop)",
              "kafka_source.py", [], ["--records", "50000"], "kindling kafka source", "plain confluent-kafka + json.loads", "-"),
    Benchmark("kafka_sink", "Kafka sink exactly-once, 2M records (vs confluent-kafka producer)",
              "kafka_sink.py", [], ["--records", "50000"], "kindling rate-micro-batch -> kafka sink, exactly-once, sink.parallelism 1",
              "plain confluent-kafka producer loop", "-"),
    Benchmark("file_sink", "Parquet sink exactly-once, 5M rows (vs pyarrow write_dataset)",
              "file_sink.py", [], ["--rows", "200000"], "kindling rate-micro-batch -> filesystem sink", "pyarrow write_dataset", "-"),
    Benchmark("jdbc_sink", "JDBC upsert into PostgreSQL exactly-once, 1M rows (vs psycopg COPY loop)",
              "jdbc_sink.py", [], ["--rows", "50000"], "kindling jdbc sink", "plain psycopg", ">= 0.5"),
    Benchmark("elasticsearch_sink", "Elasticsearch sink, 500k documents (vs streaming_bulk)",
              "elasticsearch_sink.py", [], ["--documents", "20000"], "kindling rate-micro-batch -> elasticsearch-7 sink",
              "elasticsearch.helpers.streaming_bulk", ">= 0.7"),
    Benchmark("kinesis_source", "Kinesis source, 200k records / 4 shards on kinesalite (vs boto3 GetRecords loop)",
              "kinesis_source.py", [], ["--records", "2000"], "kindling kinesis source", "plain boto3 get_records", ">= 0.8"),
    Benchmark("batch_mode", "SQL batch mode, GROUP BY over 2M bounded rows (vs hand-written PySpark)",
              "batch_mode.py", [], ["--rows", "200000"], "kindling batch mode", "hand-written PySpark", ">= 0.95"),
    Benchmark("reconcile", "Reconciliation of a click-count job over 1M Kafka records (vs the streaming run)",
              "reconcile.py", [], ["--records", "20000"], "reconcile", "streaming run", "<= 1"),
    Benchmark("async_io", "Async I/O, 100k records awaiting a 10 ms local HTTP call, capacity 100 (vs PyFlink 2.3)",
              "async_io.py", [], ["--quick"], "kindling async I/O", "pyflink async I/O", "-"),
    Benchmark("nexmark", "Nexmark, 1M events, geometric mean over the queries (vs PyFlink 2.3)",
              "nexmark/run.py", [], ["--events", "20000", "--queries", "q0,q1,q2"], "", "", ">= 2"),
]


@dataclass
class Result:
    benchmark: Benchmark
    kindling: str
    reference: str
    ratio: str
    seconds: float
    note: str = ""


def parse(benchmark: Benchmark, output: str) -> tuple[str, str, str]:
    """kindling's rate, the reference's and the ratio, from a benchmark's output."""
    ratios = re.findall(r"^ratio=([\d.]+)\s*$", output, re.MULTILINE)
    if benchmark.name == "nexmark":
        geomean = re.findall(r"^geomean_ratio_vs_pyflink=([\d.]+|nan)", output, re.MULTILINE)
        worst = re.findall(r"^min_ratio_vs_pyspark=([\d.]+|nan)", output, re.MULTILINE)
        kindling = f"min vs PySpark {worst[-1]}" if worst else "-"
        return kindling, "PyFlink", geomean[-1] if geomean else "-"
    if not ratios:
        return "-", "-", "-"
    return _rate(output, benchmark.kindling_line), _rate(output, benchmark.reference_line), ratios[-1]


def _rate(output: str, prefix: str) -> str:
    """The highest rate on the lines starting with ``prefix`` (a reference measured twice counts its faster run)."""
    rates = []
    for line in output.splitlines():
        match = _RATE.search(line) if line.startswith(prefix) else None
        if match:
            rates.append((float(match.group(1).replace(",", "")), match.group(2)))
    if not rates:
        return "-"
    rate, unit = max(rates)
    return f"{rate:,.0f} {unit}/s"


def run(benchmark: Benchmark, quick: bool, timeout: float) -> Result:
    args = list(benchmark.quick_args if quick else benchmark.args)
    if benchmark.name in ("nexmark", "async_io"):
        if not PYFLINK.exists():
            return Result(benchmark, "-", "-", "-", 0.0, "skipped: no .venv/pyflink (make pyflink)")
        args += ["--pyflink-python", str(PYFLINK)]
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / benchmark.script), *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Result(benchmark, "-", "-", "-", time.monotonic() - started, f"timed out after {timeout:.0f} s")
    seconds = time.monotonic() - started
    kindling, reference, ratio = parse(benchmark, done.stdout)
    note = ""
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        note = f"exit {done.returncode}: {last[:200]}"
    return Result(benchmark, kindling, reference, ratio, seconds, note)


def table(results: Sequence[Result], quick: bool = False) -> List[str]:
    lines = ["| benchmark | workload | kindling | reference | ratio | target | seconds | note |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        workload = r.benchmark.workload + (f" (quick: {' '.join(r.benchmark.quick_args)})" if quick else "")
        lines.append(f"| {r.benchmark.name} | {workload} | {r.kindling} | {r.reference} | {r.ratio} | "
                     f"{r.benchmark.target} | {r.seconds:.0f} | {r.note} |")
    return lines


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip() or "unknown"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated benchmark names: " + ", ".join(b.name for b in BENCHMARKS))
    parser.add_argument("--quick", action="store_true", help="small inputs: checks the table, not the figures")
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per benchmark")
    args = parser.parse_args(argv)
    chosen = [b for b in BENCHMARKS if not args.only or b.name in args.only.split(",")]
    unknown = set(filter(None, args.only.split(","))) - {b.name for b in BENCHMARKS}
    if unknown:
        parser.error(f"unknown benchmark {', '.join(sorted(unknown))}; choose from {', '.join(b.name for b in BENCHMARKS)}")
    load_before = os.getloadavg()
    results = []
    for benchmark in chosen:
        print(f"running {benchmark.name} ...", file=sys.stderr, flush=True)
        results.append(run(benchmark, args.quick, args.timeout))
    load_after = os.getloadavg()
    header = [
        f"# kindling benchmarks{' (--quick: small inputs, not the figures)' if args.quick else ''}",
        "",
        f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC, commit {_commit()}, {os.cpu_count()} cores, "
        f"load average {load_before[0]:.2f} before and {load_after[0]:.2f} after. Ratios are kindling/reference "
        "from the same run (Nexmark: the geometric mean of kindling/PyFlink over the queries).",
        "",
    ]
    lines = header + table(results, args.quick)
    print("\n".join(lines))
    out = ROOT / "artifacts" / "benchmarks.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text("\n".join(lines) + "\n")
    print(f"\nwritten to {out.relative_to(ROOT)}", file=sys.stderr)
    return 1 if any(r.note and not r.note.startswith("skipped") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
