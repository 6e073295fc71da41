"""The driver process of one job under the job manager: runs its pipeline or SQL file and records how it ended.

Started as ``python -m kindling.server.driver`` with ``KINDLING_JOB_DIR`` naming the job's
directory (see ``kindling/runtime/control.py``); writes ``result.json`` when the program returns.
A driver that dies without writing it (killed, crashed) is restarted by the job manager.
"""

from __future__ import annotations

import os
import sys
import traceback

from kindling.runtime import control
from kindling.runtime.job import JobFailedError

SUBMISSION_FILE = "submission.json"
RESULT_FILE = "result.json"


def run_program(kind: str, file: str, args: list[str]) -> None:
    """Run a Python pipeline file as ``__main__`` with its arguments (and the jobs it leaves running to their end),
    or a SQL file with ``kindling sql -f``."""
    if kind == "sql":
        from kindling.cli import main as cli_main

        code = cli_main(["sql", "-f", file, *args])
        if code:
            raise RuntimeError(f"'kindling sql -f {file}' ended with exit status {code}")
        return
    from kindling.program import execute_program

    try:
        execute_program(file, args)
    except SystemExit as exc:
        if exc.code not in (None, 0):
            raise RuntimeError(f"{file} exited with status {exc.code}") from None


def _lost_jvm(exc: BaseException) -> bool:
    text = f"{type(exc).__name__}: {exc}"
    return any(marker in text for marker in (
        "Py4JNetworkError", "Answer from Java side is empty", "Java gateway process exited", "Error while sending or receiving"))


def main() -> int:
    directory = control.job_dir()
    if directory is None:
        print(f"kindling driver: {control.JOB_DIR_ENV} is not set; the job manager starts this process", file=sys.stderr)
        return 2
    submission = control.read_json(directory / SUBMISSION_FILE) or {}
    result: dict = {"pid": os.getpid(), "state": "FINISHED"}
    try:
        run_program(submission.get("kind", "python"), submission["file"], list(submission.get("args") or []))
        if control.ATTACHED and control.ATTACHED[-1].get_job_status() == "CANCELED":
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
    for channel in control.CHANNELS:
        channel.join(timeout=30)  # a stop-with-savepoint answers the job manager before the driver exits
    control.write_json(directory / RESULT_FILE, result)
    print(f"kindling driver: job ended {result['state']}", flush=True)
    return 0 if result["state"] != "FAILED" else 1


if __name__ == "__main__":
    raise SystemExit(main())
