"""Runs PyFlink programs one after another in one process, each as ``kindling run`` runs one without a job manager.

    python example_runner.py PROGRAM WORKDIR [PROGRAM WORKDIR ...]

The programs share one Spark JVM, which saves its start-up per program. Each runs as ``__main__`` in its
own working directory (so its checkpoints are its own), with the restart strategy the tests give
``kindling run``. After each program a line ``MARKER <exit status>`` on standard output and on
standard error ends that program's output there: its print sink writes through the JVM's standard
output, which is this process's, and every line is written before the program's ``execute()`` returns.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Sequence

MARKER = "@@kindling-example-end"


def main(arguments: list[str]) -> int:
    from kindling.program import run_program
    from kindling.runtime.job_listeners import ImposedSettings, register_process_listener

    register_process_listener(ImposedSettings({"restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": "3"}))
    for program, workdir in zip(arguments[::2], arguments[1::2]):
        os.chdir(workdir)
        try:
            status = run_program(program)
        except Exception as exc:  # a program's own error: its status, as the interpreter would end it
            print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
            status = 1
        for stream in (sys.stdout, sys.stderr):
            stream.write(f"\n{MARKER} {status}\n")
            stream.flush()
    return 0


def run_programs(runs: Sequence[tuple[str, Path, Path]], env: dict[str, str], timeout: float) -> dict[str, subprocess.CompletedProcess]:
    """Run ``(name, program, workdir)`` triples in order in one runner process; each run's exit status and output by name.

    One process, not a few at once: the example jobs keep both cores busy, two runners took as long."""
    arguments = [str(part) for _, program, workdir in runs for part in (program, workdir)]
    result = subprocess.run([sys.executable, __file__, *arguments], capture_output=True, text=True, env=env, timeout=timeout, check=False)
    ends = re.compile(rf"\n{MARKER} (-?\d+)\n")
    outputs, errors = ends.split(result.stdout), ends.split(result.stderr)
    results: dict[str, subprocess.CompletedProcess] = {}
    for index, (name, _, _) in enumerate(runs):
        if 2 * index + 1 < min(len(outputs), len(errors)):
            results[name] = subprocess.CompletedProcess([name], int(outputs[2 * index + 1]), outputs[2 * index], errors[2 * index])
        else:
            results[name] = subprocess.CompletedProcess([name], -1, "", f"the runner ended before {name} finished "
                                                        f"(exit {result.returncode}): {result.stderr[-3000:]}")
    return results


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
