"""Runs PyFlink programs one after another in one process, each as ``kindling run`` runs one without a job manager.

    python example_runner.py PROGRAM WORKDIR [PROGRAM WORKDIR ...]

The programs share one Spark JVM, which saves its start-up per program. Each runs as ``__main__`` in its
own working directory (so its checkpoints are its own), with the restart strategy the tests give
``kindling run``. After each program a line ``MARKER <exit status>`` on standard output and on
standard error ends that program's output there: its print sink writes through the JVM's standard
output, which is this process's, and every line is written before the program's ``execute()`` returns.
"""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Callable, Sequence

MARKER = "@@kindling-example-end"


def main(arguments: list[str]) -> int:
    from kindling.program import run_program
    from kindling.runtime.job_listeners import ImposedSettings, register_process_listener

    register_process_listener(ImposedSettings({"restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": "3"}))
    root = logging.getLogger()
    for program, workdir in zip(arguments[::2], arguments[1::2]):
        os.chdir(workdir)
        # As in a fresh interpreter: a program's logging.basicConfig(stream=sys.stdout) (the wheel's examples call it)
        # would otherwise send the next programs' log lines into their printed output.
        for handler in root.handlers[:]:
            root.removeHandler(handler)
        root.setLevel(logging.WARNING)
        try:
            status = run_program(program)
        except Exception as exc:  # a program's own error: its status, as the interpreter would end it
            print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
            status = 1
        for stream in (sys.stdout, sys.stderr):
            stream.write(f"\n{MARKER} {status}\n")
            stream.flush()
    return 0


def start_programs(runs: Sequence[tuple[str, Path, Path]], env: dict[str, str], timeout: float,
                   background: bool = False) -> Callable[[], dict[str, subprocess.CompletedProcess]]:
    """Start ``(name, program, workdir)`` triples in order in one runner process; a function that waits for it and gives
    each run's exit status and output by name.

    One process, not a few at once: the example jobs keep both cores busy, two runners took as long. ``background``
    runs it at the lowest CPU priority (nice 19): started while other tests run, it takes only the CPU they leave idle.
    """
    arguments = [str(part) for _, program, workdir in runs for part in (program, workdir)]
    process = subprocess.Popen([sys.executable, __file__, *arguments], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=env, preexec_fn=(lambda: os.nice(19)) if background else None)
    ended: list[tuple[str, str]] = []
    reader = threading.Thread(target=lambda: ended.append(process.communicate()), daemon=True)
    reader.start()
    _RUNNING.append(process)

    def finished() -> dict[str, subprocess.CompletedProcess]:
        reader.join(timeout)
        if reader.is_alive():
            process.kill()
            reader.join()
        stdout, stderr = ended[0]
        return _results(runs, process.returncode, stdout, stderr)

    return finished


def stop_programs() -> None:
    """Kill runners still running (a test session that never waited for them)."""
    for process in _RUNNING:
        if process.poll() is None:
            process.kill()


def run_programs(runs: Sequence[tuple[str, Path, Path]], env: dict[str, str], timeout: float) -> dict[str, subprocess.CompletedProcess]:
    """Run ``(name, program, workdir)`` triples in order in one runner process; each run's exit status and output by name."""
    return start_programs(runs, env, timeout)()


def _results(runs: Sequence[tuple[str, Path, Path]], returncode: int, stdout: str, stderr: str) -> dict[str, subprocess.CompletedProcess]:
    ends = re.compile(rf"\n{MARKER} (-?\d+)\n")
    outputs, errors = ends.split(stdout), ends.split(stderr)
    results: dict[str, subprocess.CompletedProcess] = {}
    for index, (name, _, _) in enumerate(runs):
        if 2 * index + 1 < min(len(outputs), len(errors)):
            results[name] = subprocess.CompletedProcess([name], int(outputs[2 * index + 1]), outputs[2 * index], errors[2 * index])
        else:
            results[name] = subprocess.CompletedProcess([name], -1, "", f"the runner ended before {name} finished "
                                                        f"(exit {returncode}): {stderr[-3000:]}")
    return results


_RUNNING: list[subprocess.Popen] = []


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
