"""Flink's CLI on kindling: ``run``, ``list``, ``cancel``, ``stop``, ``savepoint``, ``info`` and ``cluster``.

The job commands talk to a job manager's REST API (``-m host:port``, default 127.0.0.1:8081).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request
from datetime import datetime
from typing import Any, Optional

from kindling.config import parse_defines

DEFAULT_ADDRESS = "127.0.0.1:8081"
TERMINAL = ("FINISHED", "CANCELED", "FAILED")
OPERATION_TIMEOUT_S = 600.0


class RestClient:
    """A small client of the job manager's REST API; errors carry Flink's ``errors`` messages."""

    def __init__(self, address: str) -> None:
        address = address if "://" in address else f"http://{address}"
        self.base = address.rstrip("/")

    def call(self, method: str, path: str, body: Optional[dict] = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.base}{path}", data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                text = response.read().decode()
        except urllib.error.HTTPError as exc:
            try:
                errors = json.loads(exc.read().decode()).get("errors") or [exc.reason]
            except ValueError:
                errors = [exc.reason]
            raise RuntimeError("; ".join(str(e) for e in errors)) from None
        except urllib.error.URLError as exc:
            raise RuntimeError(f"no job manager answers at {self.base} ({exc.reason}); start one with 'kindling cluster start'") from None
        return json.loads(text) if text else None

    def wait_operation(self, path: str) -> dict[str, Any]:
        """Poll an asynchronous operation (savepoint, stop, disposal) until it completes."""
        deadline = time.monotonic() + OPERATION_TIMEOUT_S
        while time.monotonic() < deadline:
            result = self.call("GET", path)
            if result["status"]["id"] == "COMPLETED":
                operation = result.get("operation") or {}
                if "failure-cause" in operation:
                    raise RuntimeError(operation["failure-cause"].get("stack-trace") or "the operation failed")
                return operation
            time.sleep(0.5)  # polling the operation's status
        raise TimeoutError(f"the operation did not complete within {OPERATION_TIMEOUT_S:.0f} s")


def _client(args: argparse.Namespace) -> RestClient:
    return RestClient(args.jobmanager)


def _when(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000).strftime("%d.%m.%Y %H:%M:%S")


# --- job commands ------------------------------------------------------------------------------
def _run(args: argparse.Namespace) -> int:
    client = _client(args)
    if args.file.endswith(".py") and not args.detached and not _answers(client):
        # No job manager: run the program here, as PyFlink's local execution does, printing to this terminal.
        from kindling.program import run_program

        print(f"kindling: no job manager answers at {client.base}; running {args.file} in this process "
              "(start one with 'kindling cluster start' to submit it instead)", file=sys.stderr, flush=True)
        _local_settings(args)
        return run_program(args.file, list(args.args))
    configuration = {}
    for item in args.dynamic or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise ValueError(f"-D takes key=value, got {item!r}")
        configuration[key] = value
    body = {
        "file": os.path.abspath(args.file),
        "programArgsList": list(args.args),
        "savepointPath": savepoint_location(args.fromSavepoint) if args.fromSavepoint else None,
        "allowNonRestoredState": args.allowNonRestoredState,
        "parallelism": args.parallelism,
        "flinkConfiguration": configuration,
        "cwd": os.getcwd(),
    }
    jid = client.call("POST", "/kindling/run", body)["jobid"]
    print(f"Job has been submitted with JobID {jid}", flush=True)
    if args.detached:
        return 0
    while True:
        state = client.call("GET", f"/jobs/{jid}")["state"]
        if state in TERMINAL:
            break
        time.sleep(1.0)  # attached mode: polling the job's state
    print(f"Job with JobID {jid} has {state.lower()}.")
    if state == "FAILED":
        exceptions = client.call("GET", f"/jobs/{jid}/exceptions")
        if exceptions.get("root-exception"):
            print(exceptions["root-exception"], file=sys.stderr)
        return 1
    return 0


def _answers(client: RestClient) -> bool:
    """Whether a job manager answers at the client's address."""
    try:
        client.call("GET", "/overview")
        return True
    except RuntimeError:
        return False


def savepoint_location(text: str) -> str:
    """``-s``'s savepoint as the job reads it: an S3 URI as given, a local path made absolute (the job's directory differs)."""
    from kindling.object_store import is_s3

    return text if is_s3(text) else os.path.abspath(text)


def _local_settings(args: argparse.Namespace) -> None:
    """``-p``, ``-s``, ``-n`` and ``-D`` for a program run in this process: every environment it creates starts with them."""
    from kindling.runtime.job_listeners import ImposedSettings, register_process_listener

    values: dict = dict(parse_defines(args.dynamic))
    if args.parallelism:
        values["parallelism.default"] = args.parallelism
    if args.fromSavepoint:
        values["execution.savepoint.path"] = savepoint_location(args.fromSavepoint)
    if args.allowNonRestoredState:
        values["execution.savepoint.ignore-unclaimed-state"] = True
    register_process_listener(ImposedSettings(values))


def _list(args: argparse.Namespace) -> int:
    jobs = _client(args).call("GET", "/jobs/overview")["jobs"]
    running = [j for j in jobs if j["state"] not in TERMINAL and j["state"] != "CREATED"]
    scheduled = [j for j in jobs if j["state"] == "CREATED"]
    terminated = [j for j in jobs if j["state"] in TERMINAL]

    def show(title: str, selection: list[dict]) -> None:
        if not selection:
            print(f"No {title.lower()}.")
            return
        print(f"------------------ {title} -------------------")
        for job in sorted(selection, key=lambda j: j["start-time"]):
            print(f"{_when(job['start-time'])} : {job['jid']} : {job['name']} ({job['state']})")
        print("--------------------------------------------------------------")

    everything = args.all or not (args.running or args.scheduled)
    if args.running or everything:
        show("Running/Restarting Jobs", running)
    if args.scheduled or everything:
        show("Scheduled Jobs", scheduled)
    if args.all:
        show("Terminated Jobs", terminated)
    return 0


def _cancel(args: argparse.Namespace) -> int:
    client = _client(args)
    print(f"Cancelling job {args.job_id}.")
    client.call("PATCH", f"/jobs/{args.job_id}?mode=cancel")
    print(f"Cancelled job {args.job_id}.")
    return 0


def _stop(args: argparse.Namespace) -> int:
    client = _client(args)
    print(f'Suspending job "{args.job_id}" with a savepoint.', flush=True)
    target = os.path.abspath(args.savepointPath) if args.savepointPath else None
    request = client.call("POST", f"/jobs/{args.job_id}/stop", {"targetDirectory": target, "drain": args.drain})
    operation = client.wait_operation(f"/jobs/{args.job_id}/savepoints/{request['request-id']}")
    print(f"Savepoint completed. Path: {operation['location']}")
    return 0


def _savepoint(args: argparse.Namespace) -> int:
    client = _client(args)
    if args.dispose:
        print(f"Disposing savepoint '{args.dispose}'.", flush=True)
        request = client.call("POST", "/savepoint-disposal", {"savepoint-path": os.path.abspath(args.dispose)})
        client.wait_operation(f"/savepoint-disposal/{request['request-id']}")
        print(f"Savepoint '{args.dispose}' disposed.")
        return 0
    if not args.job_id:
        raise ValueError("savepoint needs a job id (or -d <path> to dispose of a savepoint)")
    print(f"Triggering savepoint for job {args.job_id}.", flush=True)
    print("Waiting for response...", flush=True)
    target = os.path.abspath(args.target) if args.target else None
    request = client.call("POST", f"/jobs/{args.job_id}/savepoints", {"target-directory": target, "cancel-job": False})
    operation = client.wait_operation(f"/jobs/{args.job_id}/savepoints/{request['request-id']}")
    print(f"Savepoint completed. Path: {operation['location']}")
    print("You can resume your program from this savepoint with the run command.")
    return 0


def _info(args: argparse.Namespace) -> int:
    print(json.dumps(_client(args).call("GET", f"/jobs/{args.job_id}"), indent=2))
    return 0


# --- cluster -----------------------------------------------------------------------------------
def _cluster(args: argparse.Namespace) -> int:
    from kindling.server import jobmanager

    if args.action == "start":
        info = jobmanager.start_background(port=args.port, home=args.home, address=args.address)
        print(f"Job manager running at {info['url']} (pid {info['pid']}); dashboard at {info['url']}/")
        return 0
    if args.action == "stop":
        if args.keep_jobs and args.savepoint_path:
            raise ValueError("--keep-jobs leaves the jobs running: it cannot be combined with --savepoint-path")
        report = jobmanager.stop_background(args.home, savepoint_dir=args.savepoint_path, keep_jobs=args.keep_jobs)
        if report is None:
            print("no job manager started from this directory is running")
            kept = jobmanager.kept_jobs(args.home)
            for job in kept:
                print(f"job {job['jid']} ({job['name']}) still runs (driver pid {job['pid']}), kept by an earlier 'cluster stop --keep-jobs'")
            return 0
        for line in report:
            print(line)
        print("Job manager stopped")
        return 0
    info = jobmanager.status(args.home)
    if not info.get("running"):
        info["keptJobs"] = jobmanager.kept_jobs(args.home)
    print(json.dumps(info, indent=2))
    return 0 if info.get("running") else 3


def _with_address(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("-m", "--jobmanager", default=DEFAULT_ADDRESS, help=f"job manager address host:port (default {DEFAULT_ADDRESS})")
    return parser


def add_commands(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add the job manager's commands to the ``kindling`` command line."""
    from kindling.server.jobmanager import DEFAULT_HOME

    cluster = commands.add_parser("cluster", help="start, stop or inspect the job manager")
    cluster.add_argument("action", choices=["start", "stop", "status"])
    cluster.add_argument("--port", type=int, default=8081, help="REST port (rest.port, default 8081)")
    cluster.add_argument("--address", default="127.0.0.1", help="REST address (rest.address, default 127.0.0.1)")
    cluster.add_argument("--home", default=DEFAULT_HOME, help=f"where job records live (default {DEFAULT_HOME})")
    cluster.add_argument("--savepoint-path", metavar="DIR", help="stop: stop running jobs with a savepoint in DIR instead of cancelling them")
    cluster.add_argument("--keep-jobs", action="store_true",
                         help="stop: leave running jobs running; 'cluster status' lists them, the next 'cluster start' supervises them")
    cluster.set_defaults(handler=_cluster)

    run = _with_address(commands.add_parser("run", help="submit a Python pipeline file or a SQL file to the job manager"))
    run.add_argument("-d", "--detached", action="store_true", help="return once the job is submitted")
    run.add_argument("-s", "--fromSavepoint", help="resume from this savepoint")
    run.add_argument("-n", "--allowNonRestoredState", action="store_true", help="skip savepoint state that maps onto no operator")
    run.add_argument("-p", "--parallelism", type=int, help="parallelism.default for the job")
    run.add_argument("-D", dest="dynamic", action="append", metavar="key=value", help="a configuration option for the job")
    run.add_argument("file", help="the pipeline (.py) or SQL file (.sql)")
    run.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the program")
    run.set_defaults(handler=_run)

    listing = _with_address(commands.add_parser("list", help="list jobs"))
    listing.add_argument("-r", "--running", action="store_true", help="running and restarting jobs")
    listing.add_argument("-s", "--scheduled", action="store_true", help="jobs not yet running")
    listing.add_argument("-a", "--all", action="store_true", help="every job, terminated ones too")
    listing.set_defaults(handler=_list)

    cancel = _with_address(commands.add_parser("cancel", help="cancel a job"))
    cancel.add_argument("job_id")
    cancel.set_defaults(handler=_cancel)

    stop = _with_address(commands.add_parser("stop", help="stop a job with a savepoint (it ends FINISHED)"))
    stop.add_argument("--savepointPath", "-p", help="directory for the savepoint (default state.savepoints.dir)")
    stop.add_argument("--drain", "-d", action="store_true", help="emit a final watermark first (not supported by kindling)")
    stop.add_argument("job_id")
    stop.set_defaults(handler=_stop)

    savepoint = _with_address(commands.add_parser("savepoint", help="take a savepoint of a running job, or dispose of one"))
    savepoint.add_argument("-d", "--dispose", metavar="PATH", help="dispose of the savepoint at PATH")
    savepoint.add_argument("job_id", nargs="?")
    savepoint.add_argument("target", nargs="?", help="directory for the savepoint (default state.savepoints.dir)")
    savepoint.set_defaults(handler=_savepoint)

    info = _with_address(commands.add_parser("info", help="show a job's details"))
    info.add_argument("job_id")
    info.set_defaults(handler=_info)
