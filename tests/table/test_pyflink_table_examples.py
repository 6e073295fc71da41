"""PyFlink's Table API example programs run unchanged on kindling and print PyFlink 2.3's records.

Runs the programs of ``RUNNABLE`` one after another in one subprocess (tests/datastream/example_runner.py,
one Spark JVM), each in its own directory, and compares what each printed with the recorded PyFlink
output as multisets of lines with the ``N> `` subtask prefix removed (kindling's SQL print sink writes
no prefix: Spark partitions are not Flink's subtasks), FLOAT values to float32 precision where the
program's list entry says so, or as the final row per key of an updating query's changelog.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "datastream"))
from example_runner import run_programs, start_programs  # noqa: E402
from pyflink_table_examples import NOT_RUNNABLE, RUNNABLE, examples_dir, reference_dir, reference_name  # noqa: E402

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
NOISE = ("Using Any for unsupported type", "No module named google.cloud", "PYFLINK_CYTHON_ENABLED")
SUBTASK = re.compile(r"^\d+> ")


def records(text: str) -> list[str]:
    return sorted(SUBTASK.sub("", line) for line in text.splitlines() if line.strip() and not line.startswith(NOISE))


FLOAT = re.compile(r"(?<![\d.])-?\d+\.\d+(?![\d:])")


def in_order(text: str) -> list[str]:
    return [SUBTASK.sub("", line) for line in text.splitlines() if line.strip() and not line.startswith(NOISE)]


def final_rows(lines: list[str]) -> dict[str, str]:
    """A printed changelog applied: the last value per key (all columns but the last), deletions removed."""
    state: dict[str, str] = {}
    for line in lines:
        matched = re.fullmatch(r"([+-][IUD])\[(.*)\]", line)
        if matched is None:
            continue
        kind, body = matched.groups()
        key, value = body.rsplit(", ", 1)
        if kind in ("+I", "+U"):
            state[key] = value
        elif kind == "-D":
            state.pop(key, None)
    return state


def shape(lines: list[str]) -> list[str]:
    """Lines with every word or number (signed, with its dots and underscores) written as x and runs of spaces as one
    (output over random input)."""
    return sorted(re.sub(r" +", " ", re.sub(r"-?[A-Za-z0-9_.]+", "x", line)) for line in lines)


def float32(lines: list[str]) -> list[str]:
    """Lines with every decimal number rounded to float32's 6 significant digits."""
    return sorted(FLOAT.sub(lambda m: f"{float(m.group()):.6g}", line) for line in lines)


def test_every_table_example_is_run_or_listed_with_a_reason():
    found = {str(p.relative_to(examples_dir("table"))) for p in examples_dir("table").rglob("*.py")}
    assert found == set(RUNNABLE) | set(NOT_RUNNABLE), found ^ (set(RUNNABLE) | set(NOT_RUNNABLE))


def _programs(tmp_path_factory) -> list[tuple[str, Path, Path]]:
    return [(name, examples_dir("table") / name, tmp_path_factory.mktemp(Path(name).stem)) for name in RUNNABLE]


_started: list = []  # the runs, when the session started them in the background


def start_in_background(tmp_path_factory) -> None:
    """Called at the session's start (tests/conftest.py): the runs begin at the lowest CPU priority."""
    _started.append(start_programs(_programs(tmp_path_factory), env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=1800,
                                   background=True))


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    if _started:
        return _started[0]()
    return run_programs(_programs(tmp_path_factory), env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=1800)


@pytest.mark.parametrize("program", RUNNABLE)
def test_the_example_prints_pyflinks_records(runs, program):
    result = runs[program]
    assert result.returncode == 0, result.stderr[-3000:]
    expected = records((reference_dir() / reference_name(program)).read_text())
    if RUNNABLE[program] == "float32":
        assert float32(records(result.stdout)) == float32(expected)
    elif RUNNABLE[program] == "shape":
        assert shape(records(result.stdout)) == shape(expected)
    elif RUNNABLE[program] == "final":  # in arrival order: the last change of a key is its value
        reference = (reference_dir() / reference_name(program)).read_text()
        assert final_rows(in_order(result.stdout)) == final_rows(in_order(reference))
    else:
        assert records(result.stdout) == expected
