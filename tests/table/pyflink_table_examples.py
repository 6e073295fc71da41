"""The Table API example programs of the apache-flink 2.3 wheel: which run here, and why the others do not.

The programs are fetched at test time (``examples_dir("table")`` of tests/datastream/pyflink_examples.py);
their PyFlink 2.3 output was recorded once from a real PyFlink run and lives in pyflink_reference/.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datastream"))
from pyflink_examples import examples_dir  # noqa: E402,F401

# Example programs that run here, and how their records are compared with PyFlink's: "exact"; "float32"
# (FLOAT sums compared to float32 precision: Flink adds a sliding window's FLOAT values pane by pane in float32,
# kindling adds them in one double and rounds once, so 30.2 + 53.1 + 3.1 prints 86.4 where Flink prints 86.399994);
# "shape" for programs over random input (every run of letters and digits compared as one word, whitespace runs as
# one space: the table's layout, not its random values); or
# "final" for an updating query's changelog, compared as the final row per key (the first columns) after applying
# it: kindling's unbounded GROUP BY writes each micro-batch's new value as an upsert +U, where Flink retracts
# the old row (-U) per record.
RUNNABLE = {
    "process_json_data.py": "exact",
    "process_json_data_with_udf.py": "exact",
    "multi_sink.py": "exact",
    "windowing/tumble_window.py": "exact",
    "windowing/session_window.py": "exact",
    "windowing/sliding_window.py": "float32",
    "windowing/over_window.py": "exact",
    "mixing_use_of_datastream_and_table.py": "shape",
    "pandas/conversion_from_dataframe.py": "shape",
    "pandas/pandas_udaf.py": "exact",
    "word_count.py": "final",
    "async/async_scalar_function.py": "shape",
}

NOT_RUNNABLE = {
    "basic_operations.py": "fails in PyFlink 2.3 itself (AttributeError in its Python worker): no output to compare",
    "streaming_word_count.py": "unbounded random datagen input: runs, but has no output to compare",
}


def reference_dir() -> Path:
    return Path(__file__).parent / "pyflink_reference"


def reference_name(program: str) -> str:
    return program.replace("/", "__").removesuffix(".py") + ".txt"
