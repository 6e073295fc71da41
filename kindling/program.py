"""Running a user's pipeline program in this process: ``python -m kindling prog.py`` and ``kindling run`` without a job manager.

The program runs as ``__main__`` with its arguments, ``import pyflink...`` resolving to kindling
(kindling.pyflink_compat), and a failed job ends it with the job's one-line failure instead of a
Python traceback through kindling's internals.
"""

from __future__ import annotations

import importlib.util
import logging
import runpy
import sys
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Iterator, Sequence


def execute_program(file: str, args: Sequence[str] = ()) -> None:
    """Run ``file`` as ``__main__`` with ``args``, then wait for the jobs it started and left running.

    A PyFlink program submitted with ``flink run`` may return as soon as its job is submitted (the
    walkthroughs call ``execute_insert`` without ``wait()``): the job runs on in the cluster. Here the
    job runs in this process, so the process stays until those jobs end; Ctrl-C (or the job manager's
    cancel) ends them. Raises what the program raised, or ``JobFailedError`` if a job failed.
    """
    import kindling.pyflink_compat  # noqa: F401  (installs the pyflink aliases)
    from kindling.runtime.job import TERMINAL_STATES, running_jobs

    sys.argv = [file, *args]
    sys.path.insert(0, str(Path(file).resolve().parent))
    earlier = running_jobs()
    runpy.run_path(file, run_name="__main__")
    for job in [job for job in running_jobs() if not any(job is other for other in earlier)]:
        if job.get_job_status() in TERMINAL_STATES:
            continue
        print(f"kindling: {Path(file).name} returned; its job '{job.job_name}' ({job.get_job_id()}) runs on until it ends "
              "or is cancelled, as a submitted job runs on in a Flink cluster", file=sys.stderr, flush=True)
        job.wait()


def run_program(file: str, args: Sequence[str] = ()) -> int:
    """Run ``file`` as ``__main__`` (see :func:`execute_program`); returns the exit status."""
    from kindling.runtime.job import JobFailedError

    # A program that logs INFO to stdout (PyFlink's examples do) would print py4j's connection chatter among its records.
    logging.getLogger("py4j").setLevel(logging.WARNING)
    if not Path(file).is_file():
        print(f"kindling: no program file {file!r}", file=sys.stderr)
        return 2
    try:
        with _framework_log_on_stderr():
            execute_program(file, args)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except JobFailedError as exc:
        print(f"kindling: {exc}", file=sys.stderr, flush=True)
        return 1
    return 0


@contextmanager
def _framework_log_on_stderr() -> Iterator[None]:
    """kindling's own log lines (a job restarting, a connector's warning) go to stderr while a program runs, never
    through the program's logging set-up: PyFlink's examples call ``logging.basicConfig(stream=sys.stdout)``, and
    Flink writes its framework log to its log files, so a PyFlink program's stdout holds only what the program and
    its print sinks write. Levels still follow the program's root logger."""
    framework = logging.getLogger("kindling")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    propagate = framework.propagate
    framework.addHandler(handler)
    framework.propagate = False
    try:
        yield
    finally:
        framework.removeHandler(handler)
        framework.propagate = propagate


def load_program(file: str | Path, module_name: str) -> ModuleType:
    """A PyFlink program file as a module (not run as ``__main__``), its ``pyflink`` imports resolved to kindling.

    The playgrounds use it to call a shipped program's functions with their own servers, e.g.
    ``load_program("examples/payments/payment_msg_processing.py", "payments").log_processing(env, ...)``.
    """
    import kindling.pyflink_compat  # noqa: F401 - installs the pyflink -> kindling import finder

    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise ValueError(f"not a Python program file: {file}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
