"""The program's output when it is a file: lines a Spark Python worker appends (the print sink's) survive the
driver's and the JVM's own writes to the same file (``python job.py > out.txt 2>&1``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

_PROGRAM = """
import os, sys
from kindling.runtime.program_output import append_program_output
if sys.argv[1] == "append":
    append_program_output()
worker = open(f"/proc/{os.getpid()}/fd/1", "a", buffering=1)  # a worker's own description of the program's stdout
sys.stdout.write("started\\n"); sys.stdout.flush()
worker.write("+I[from a worker]\\n")
sys.stderr.write("a log line\\n"); sys.stderr.flush()
sys.stdout.write("done\\n"); sys.stdout.flush()
"""


def _run(tmp_path: Path, mode: str) -> str:
    out = tmp_path / f"{mode}.txt"
    with out.open("w") as file:  # as the shell's `> out.txt 2>&1` opens it: not in append mode
        subprocess.run([sys.executable, "-c", _PROGRAM, mode], stdout=file, stderr=subprocess.STDOUT, check=True,
                       cwd=Path(__file__).resolve().parents[2])
    return out.read_text()


def test_a_workers_lines_are_not_overwritten_by_the_drivers_later_writes(tmp_path):
    assert _run(tmp_path, "append").splitlines() == ["started", "+I[from a worker]", "a log line", "done"]
    assert "+I[from a worker]" not in _run(tmp_path, "plain")  # what happened before: the driver wrote over it
