"""The program's standard output, from the Spark Python workers that run its functions and print sinks.

Under PyFlink a local job's print sink and what its Python functions ``print`` reach the program's standard
output. PySpark's daemon points a worker's standard output at the JVM's standard error instead (its own stdout
carries the port it tells the JVM). The JVM's standard output is the driver program's own; a worker on this
machine finds it through ``/proc`` and writes there.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Optional

from kindling.runtime.worker_forks import FORK_PARENT_VARIABLE

_STDOUT: list = []


def program_stdout() -> Optional[Any]:
    """The standard output of the Spark JVM this process is a Python worker of, opened for appending (line-buffered),
    or None outside a Spark worker on this machine."""
    if not _STDOUT:
        _STDOUT.append(_open_jvm_stdout())
    return _STDOUT[0]


def _open_jvm_stdout() -> Optional[Any]:
    # A worker forked by kindling's fork server (kindling.runtime.worker_forks) descends from the driver's Python,
    # not from the JVM: the JVM is the parent of the client that asked for the fork, named in the environment.
    forked = os.environ.get(FORK_PARENT_VARIABLE, "")
    starts = [int(forked), os.getppid()] if forked.isdigit() else [os.getppid()]
    for start in starts:
        found = _jvm_stdout_above(start)
        if found is not None:
            return found
    return None


def _jvm_stdout_above(pid: int) -> Optional[Any]:
    for _ in range(4):  # the worker's parent, or the daemon's parent
        try:
            with open(f"/proc/{pid}/comm") as comm:
                name = comm.read().strip()
            if name == "java":
                # Appending: a redirected stdout (``> out.txt``) is a file that "w" would truncate, and each
                # worker's own offset would overwrite the others' lines. Kept open for the process's life.
                return open(f"/proc/{pid}/fd/1", "a", buffering=1)
            with open(f"/proc/{pid}/stat") as stat:
                pid = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return None
    return None


def append_program_output() -> None:
    """In the driver: put the program's standard output and error, when they are regular files, in append mode.

    A worker appends its lines to the JVM's standard output through a file description of its own (see
    ``program_stdout``). The driver and the JVM write through the description the shell opened (``job.py > out.txt
    2>&1``), at an offset that does not move when a worker appends: their next line would overwrite the worker's.
    The mode belongs to the description the driver, its JVM and the JVM's workers share, so setting it here makes
    every writer append at the end, as one process writing to the file would."""
    import fcntl
    import stat

    for fd in (1, 2):
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_APPEND)
        except OSError:
            continue


def user_prints_to_program_stdout() -> None:
    """In a Spark Python worker, make ``print`` in user functions write to the program's standard output (once per
    process; nothing elsewhere, the driver's own prints already go there)."""
    stdout = program_stdout()
    if stdout is not None and sys.stdout is not stdout:
        sys.stdout = stdout


__all__ = ["append_program_output", "program_stdout", "user_prints_to_program_stdout"]
