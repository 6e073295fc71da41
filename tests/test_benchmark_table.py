"""The benchmark table (benchmarks/run_all.py) reads what the benchmarks print."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_SPEC = importlib.util.spec_from_file_location("run_all", Path(__file__).resolve().parents[1] / "benchmarks" / "run_all.py")
run_all = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault("run_all", run_all)  # dataclasses look their module up by name
_SPEC.loader.exec_module(run_all)
BENCHMARKS = {b.name: b for b in run_all.BENCHMARKS}


def test_a_row_holds_kindlings_rate_the_references_and_the_ratio():
    output = ("built-in aggregation (groupBy.avg, update mode): 480,000 rows/s (4.2 s); state 100,000 rows, 5.0 MB\n"
              "keyed process function (running average, ValueState): 36,000 rows/s (55.6 s); state 100,000 rows, 0.0 MB\n"
              "ratio=0.075\n")
    assert run_all.parse(BENCHMARKS["stateful"], output) == ("36,000 rows/s", "480,000 rows/s", "0.075")


def test_the_kafka_sink_row_reads_the_one_publisher_exactly_once_line():
    output = ("plain confluent-kafka producer loop: 200,000 records/s (10.0 s)\n"
              "kindling rate-micro-batch -> kafka sink, exactly-once, sink.parallelism 2 (availableNow, 2 tasks): "
              "90,000 records/s in micro-batches (1.0 s); 50,000 records/s with query start-up (2.0 s)\n"
              "kindling rate-micro-batch -> kafka sink, exactly-once, sink.parallelism 1 (availableNow, 2 tasks): "
              "80,000 records/s in micro-batches (1.0 s); 40,000 records/s with query start-up (2.0 s)\n"
              "ratio=0.40\n")
    assert run_all.parse(BENCHMARKS["kafka_sink"], output) == ("80,000 records/s", "200,000 records/s", "0.40")


def test_a_reference_measured_twice_counts_its_faster_run():
    output = ("plain confluent-kafka + json.loads (run 1): 250,000 rows/s (4.0 s)\n"
              "kindling kafka source -> noop (availableNow, parallelism 2): 100,000 rows/s (10.0 s)\n"
              "plain confluent-kafka + json.loads (run 2): 270,000 rows/s (3.7 s)\nratio=0.37\n")
    assert run_all.parse(BENCHMARKS["kafka_source"], output) == ("100,000 rows/s", "270,000 rows/s", "0.37")


def test_nexmark_reports_the_geometric_mean_and_the_lowest_ratio_to_pyspark():
    output = "q0 ...\nmin_ratio_vs_pyspark=0.512\ngeomean_ratio_vs_pyflink=1.130\n"
    assert run_all.parse(BENCHMARKS["nexmark"], output) == ("min vs PySpark 0.512", "PyFlink", "1.130")


def test_a_benchmark_that_printed_no_ratio_has_an_empty_row():
    assert run_all.parse(BENCHMARKS["file_sink"], "Traceback ...\n") == ("-", "-", "-")
    lines = run_all.table([run_all.Result(BENCHMARKS["file_sink"], "-", "-", "-", 3.0, "exit 1: boom")])
    assert lines[-1].startswith("| file_sink |") and lines[-1].endswith("| - | 3 | exit 1: boom |")
