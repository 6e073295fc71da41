"""The driver process of one job under the job manager: runs its pipeline or SQL file and records how it ended.

Started as ``python -m kindling.server.driver`` with ``KINDLING_JOB_DIR`` naming the job's
directory (see ``kindling/server/driver_channel.py``); writes ``result.json`` when the program returns.
A driver that dies without writing it (killed, crashed) is restarted by the job manager. The program
is followed through a job listener registered for the whole process, so it runs as it would alone.
"""

from __future__ import annotations

import os
import sys
import traceback

from kindling.config import parse_defines
from kindling.runtime.job import JobFailedError
from kindling.runtime.job_listeners import register_process_listener
from kindling.runtime.json_files import read_json, write_json
from kindling.server.driver_channel import JOB_DIR_ENV, DriverListener, job_dir

SUBMISSION_FILE = "submission.json"
RESULT_FILE = "result.json"


def run_program(kind: str, file: str, args: list[str]) -> None:
    """Run a Python pipeline file as ``__main__`` with its arguments (and the jobs it leaves running to their end),
    or a SQL file as ``kindling sql -f`` runs it (its arguments: ``-D key=value`` options)."""
    if kind == "sql":
        from kindling.sql.client import run_file

        code = run_file(file, parse_defines(_define_values(args)))
        if code:
            raise RuntimeError(f"SQL script {file} ended with exit status {code}")
        return
    from kindling.program import execute_program

    try:
        execute_program(file, args)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            raise RuntimeError(f"{file} exited with status {exc.code}") from None


def _define_values(args: list[str]) -> list[str]:
    """The values of ``-D key=value`` / ``-Dkey=value`` arguments; anything else is an error naming it."""
    values, rest = [], list(args)
    while rest:
        flag = rest.pop(0)
        if flag in ("-D", "--define") and rest:
            values.append(rest.pop(0))
        elif flag.startswith("-D") and len(flag) > 2:
            values.append(flag[2:])
        else:
            raise ValueError(f"a SQL job takes only -D key=value arguments, got {flag!r}")
    return values


def _lost_jvm(exc: BaseException) -> bool:
    text = f"{type(exc).__name__}: {exc}"
    return any(marker in text for marker in (
        "Py4JNetworkError", "Answer from Java side is empty", "Java gateway process exited", "Error while sending or receiving"))


def main() -> int:
    directory = job_dir()
    if directory is None:
        print(f"kindling driver: {JOB_DIR_ENV} is not set; the job manager starts this process", file=sys.stderr)
        return 2
    listener = DriverListener(directory)
    register_process_listener(listener)
    submission = read_json(directory / SUBMISSION_FILE) or {}
    result: dict = {"pid": os.getpid(), "state": "FINISHED"}
    try:
        run_program(submission.get("kind", "python"), submission["file"], list(submission.get("args") or []))
        if listener.jobs and listener.jobs[-1].get_job_status() == "CANCELED":
            result["state"] = "CANCELED"
    except BaseException as exc:  # every way the program can fail is reported to the job manager
        if _lost_jvm(exc):
            # The Spark driver JVM died under the program: a crash of the driver, not a failure
            # of the job. Without a result the job manager applies the restart strategy.
            print(f"kindling driver: the Spark driver JVM is gone ({exc}); the job manager decides on a restart", flush=True)
            return 70
        message = str(exc) if isinstance(exc, JobFailedError) else f"{type(exc).__name__}: {exc}"
        result = {
            "pid": os.getpid(),
            "state": "FAILED",
            "exceptionName": type(exc).__name__,
            "message": message,
            "stacktrace": traceback.format_exc(),
        }
    for channel in listener.channels:
        channel.join(timeout=30)  # a stop-with-savepoint answers the job manager before the driver exits
    write_json(directory / RESULT_FILE, result)
    print(f"kindling driver: job ended {result['state']}", flush=True)
    return 0 if result["state"] != "FAILED" else 1


if __name__ == "__main__":
    raise SystemExit(main())
