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
from pathlib import Path
from types import ModuleType
from typing import Sequence


def run_program(file: str, args: Sequence[str] = ()) -> int:
    """Run ``file`` as ``__main__``; returns the exit status."""
    import kindling.pyflink_compat  # noqa: F401  (installs the pyflink aliases)
    from kindling.runtime.job import JobFailedError

    # A program that logs INFO to stdout (PyFlink's examples do) would print py4j's connection chatter among its records.
    logging.getLogger("py4j").setLevel(logging.WARNING)
    path = Path(file)
    if not path.is_file():
        print(f"kindling: no program file {file!r}", file=sys.stderr)
        return 2
    sys.argv = [str(path), *args]
    sys.path.insert(0, str(path.resolve().parent))
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except JobFailedError as exc:
        print(f"kindling: {exc}", file=sys.stderr, flush=True)
        return 1
    return 0


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
