"""Spark's per-query Python processes, forked from a warm interpreter instead of started cold.

Every streaming query starts a Python process of its own on the driver for each Python data source it reads
(``python_streaming_source_runner``) and one for a ``transformWithState`` operator's driver side
(``transform_with_state_driver_worker``); every driver starts a ``pyspark.daemon`` per planning step of Python
data sources (lookup, create, plan a read, write, commit: five or more per driver). Each imports PySpark,
PyArrow, NumPy and kindling's connector before it does any work: about 0.7 s of CPU, paid several times per
query, while queries that wait for their sources run on the same two cores. Measured over the differential
corpus's streaming queries, these processes took a quarter of the CPU.

So a session on this machine starts one *fork server*: an interpreter that imports those modules once and
waits on a Unix socket. The worker launcher (:mod:`kindling.runtime.python_workers`) runs a small client for
these two modules instead of the interpreter; the client hands the server its argument list, working
directory, environment and standard streams, and the server forks a child that takes them over and runs the
module as ``python -m`` would. The child connects back to the JVM and reports its own pid (Spark stops a
worker by that pid); the client waits for the child and exits with its status, and passes on the signals it
gets. When no server answers (not started yet, or gone), the client runs the interpreter as before.

The server lives as long as the driver that started it: it exits when its standard input, a pipe from the
driver, closes.
"""

from __future__ import annotations

import atexit
import io
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import traceback
from pathlib import Path
from typing import Optional

from kindling.runtime.fork_safety import WORKER_MODULES, one_thread_environment, warm_up

SOCKET_VARIABLE = "KINDLING_WORKER_FORKS"
# The client's parent (the JVM that started the worker), for a forked worker whose own parent is the server.
FORK_PARENT_VARIABLE = "KINDLING_FORK_PARENT"
FORKED_MODULES = (
    "pyspark.sql.streaming.python_streaming_source_runner",
    "pyspark.sql.streaming.transform_with_state_driver_worker",
    # The driver's planner daemons: Spark starts one `python -m pyspark.daemon <planner module>` per planning step
    # of Python data sources (looking them up, creating one, planning a read, a write, its commit) and forks a
    # planner from it per call. A session's UDF workers have their own daemon (kindling.runtime.warm_daemon).
    "pyspark.daemon",
)
_PLANNER_MODULES = (
    "pyspark.sql.worker.lookup_data_sources",
    "pyspark.sql.worker.create_data_source",
    "pyspark.sql.worker.plan_data_source_read",
    "pyspark.sql.worker.data_source_pushdown_filters",
    "pyspark.sql.worker.write_into_data_source",
    "pyspark.sql.worker.commit_data_source_write",
    "pyspark.sql.worker.python_streaming_sink_runner",
)
# What those processes import before their first byte of work; imported once in the server.
_WARM_MODULES = FORKED_MODULES + WORKER_MODULES + _PLANNER_MODULES + (
    "kindling.connectors.base",
    "kindling.connectors.filesystem",
)
_LENGTH = 4

# The client the launcher runs for FORKED_MODULES, as ``python -I -S -c CLIENT -m module args...``: standard
# library only (it starts in ~30 ms). A server that does not answer leaves the interpreter to run as before.
CLIENT = f"""
import array, os, signal, socket, sys
argv = sys.argv[1:]
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(os.environ[{SOCKET_VARIABLE!r}])
    env = dict(os.environ, {FORK_PARENT_VARIABLE}=str(os.getppid()))
    fields = [str(len(argv))] + argv + [os.getcwd()] + [k + "=" + v for k, v in env.items()]
    body = "\\0".join(fields).encode("utf-8", "surrogateescape")
    s.sendmsg([b"F"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))])
    s.sendall(len(body).to_bytes({_LENGTH}, "big") + body)
    f = s.makefile("rb")
    pid = f.read({_LENGTH})
except (OSError, KeyError):
    pid = b""
if len(pid) != {_LENGTH}:
    os.execv(sys.executable, [sys.executable] + argv)
pid = int.from_bytes(pid, "big")
def forward(number, frame):
    try:
        os.kill(pid, number)
    except OSError:
        pass
for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
    signal.signal(number, forward)
status = f.read({_LENGTH})
os._exit(int.from_bytes(status, "big", signed=True) & 0xFF if len(status) == {_LENGTH} else 1)
"""

_server: Optional[subprocess.Popen] = None


def start(python: str = sys.executable) -> str:
    """Start this driver's fork server (once) and name its socket in the environment the JVM will inherit.

    ``python`` is the interpreter the workers would run (the session passes its worker launcher, which imports
    PySpark from its install). Returns the socket's path. The server imports its modules in the background; until
    it listens, workers start the usual way.

    >>> path = start()
    >>> os.environ[SOCKET_VARIABLE] == path
    True
    """
    global _server
    if _server is not None and _server.poll() is None:
        return os.environ[SOCKET_VARIABLE]
    folder = Path(tempfile.mkdtemp(prefix="kindling-forks-"))
    path = str(folder / "socket")
    _server = subprocess.Popen(
        [python, "-m", "kindling.runtime.worker_forks", path],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=server_environment(), start_new_session=True,
    )
    os.environ[SOCKET_VARIABLE] = path
    return path


def server_environment() -> dict[str, str]:
    """The server's environment: this process's, with no thread started by the modules it imports.

    Forking is safe from a process of one thread (pyspark.daemon imports its worker module after the fork for that
    reason): no BLAS thread pool for NumPy, no background purge thread for PyArrow's jemalloc, in the server."""
    env = dict(os.environ)
    one_thread_environment(env)
    env.pop(SOCKET_VARIABLE, None)
    return env


def serve(path: str, modules: tuple[str, ...] = FORKED_MODULES) -> None:
    """The server: warm up, listen on ``path``, fork a child per request for one of ``modules`` until standard
    input closes."""
    if not warm_up(_WARM_MODULES):
        return  # a module started a thread: forking could copy a lock it holds, so workers start the usual way
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    staging = path + ".binding"
    listener.bind(staging)
    listener.listen(64)
    os.rename(staging, path)  # clients see a listening socket or none
    try:
        while True:
            readable, _, _ = select.select([listener, sys.stdin], [], [], 5.0)
            _reap()
            if sys.stdin in readable and not os.read(sys.stdin.fileno(), 1):
                return
            if listener in readable:
                connection, _ = listener.accept()
                _fork(connection, listener, modules)
    finally:
        listener.close()
        Path(path).unlink(missing_ok=True)
        try:
            Path(path).parent.rmdir()
        except OSError:
            pass


def _reap() -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass
    except ChildProcessError:
        pass


def _fork(connection: socket.socket, listener: socket.socket, modules: tuple[str, ...]) -> None:
    fds: list[int] = []
    try:
        connection.settimeout(10)
        _, ancillary, _, _ = connection.recvmsg(1, socket.CMSG_SPACE(3 * 4))
        for level, kind, data in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds.extend(int.from_bytes(data[i:i + 4], sys.byteorder) for i in range(0, len(data) - len(data) % 4, 4))
        length = int.from_bytes(_read(connection, _LENGTH), "big")
        fields = _read(connection, length).decode("utf-8", "surrogateescape").split("\0")
        count = int(fields[0])
        argv, cwd, environment = fields[1:1 + count], fields[1 + count], fields[2 + count:]
        if len(fds) != 3 or len(argv) < 2 or argv[0] != "-m" or argv[1] not in modules:
            return  # the client runs the interpreter itself
        if os.fork() == 0:
            listener.close()
            _child(connection, fds, argv, cwd, environment)
    except (OSError, ValueError, IndexError):
        return
    finally:
        for fd in fds:
            os.close(fd)
        connection.close()


def _read(connection: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            raise OSError("client closed")
        data += chunk
    return data


def _child(connection: socket.socket, fds: list[int], argv: list[str], cwd: str, environment: list[str]) -> None:
    """Become the process ``python -m argv[1] argv[2:]`` would have been, then exit with its status."""
    import runpy

    status = 1
    try:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(entry.split("=", 1) for entry in environment if "=" in entry)
        extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p not in sys.path]
        sys.path[0:0] = extra
        unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
        sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=unbuffered, line_buffering=not unbuffered)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
        connection.settimeout(None)
        connection.sendall(os.getpid().to_bytes(_LENGTH, "big"))
        sys.argv = [argv[1], *argv[2:]]
        sys.modules.pop(argv[1], None)  # its imports stay warm; the module itself runs afresh as __main__
        try:
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
            status = 0
        except SystemExit as exit_:
            status = _exit_status(exit_.code)
        except (BrokenPipeError, ConnectionResetError):
            # The JVM closed its end of the worker's connection before this process could report anything: Spark
            # stops a worker by closing its socket and signalling its pid, and the signal, passed on by the client,
            # can land second. A PySpark worker reports its own errors over that connection, so only its loss
            # escapes to here; the traceback would be noise on the console at the end of every such query.
            status = 1
        except BaseException:
            traceback.print_exc()
            status = 1
        atexit._run_exitfuncs()
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:  # noqa: BLE001 — a closed pipe: nothing left to say
                pass
        connection.sendall(status.to_bytes(_LENGTH, "big", signed=True))
    finally:
        os._exit(status & 0xFF)


def _exit_status(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


if __name__ == "__main__":
    serve(sys.argv[1], FORKED_MODULES + tuple(sys.argv[2:]))
