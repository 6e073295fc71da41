"""Running a local server process: owned by the caller (tests) or detached with a state file (the CLI).

Every local service (Kafka, S3) starts the same way: a command on loopback ports, its output in a
log file, readiness by a real request, stop by pid (SIGTERM, then SIGKILL). Only the command, the
readiness check and the process name differ; they live in the service's module.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Optional

from kindling.local.ports import wait_until


def alive(pid: int) -> bool:
    """Whether ``pid`` runs; a zombie child counts as ended."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return True


def runs(pid: int, program: bytes) -> bool:
    """Whether ``pid`` is alive and its command line names ``program`` (a guard against pid reuse)."""
    if not alive(pid):
        return False
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return program in cmdline.read()
    except OSError:
        return True


def terminate(pid: int, timeout: float, reap: Optional[subprocess.Popen] = None) -> None:
    """SIGTERM one pid, SIGKILL it if it has not ended after ``timeout`` seconds."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if reap is not None and reap.poll() is not None:
            return
        if reap is None and not alive(pid):
            return
        time.sleep(0.05)  # polling a process we signalled; there is nothing to wait on
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    if reap is not None:
        reap.wait(timeout=10)


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: have the kernel SIGTERM the server when the process that started it dies."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def log_tail(path: Optional[Path], limit: int = 2000) -> str:
    """The end of a server's log, without noida-db's harmless glibc warning."""
    if path is None:
        return ""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    lines = [line for line in text.splitlines() if "GLIBC" not in line]
    return "\n".join(lines)[-limit:]


def start_and_wait(command: list[str], log_path: Path, ready: Callable[[], bool], what: str, timeout: float,
                   detached: bool = False, user: Optional[str] = None, env: Optional[dict[str, str]] = None,
                   cwd: Optional[Path] = None) -> subprocess.Popen:
    """Start ``command`` logging to ``log_path`` and return once ``ready()`` is true.

    An owned server dies with its parent; a detached one runs in its own session, out of reach of
    the terminal's Ctrl-C. If the process exits or does not get ready in time, it is stopped and
    the error carries the log's end. ``user`` runs the server as that system user (PostgreSQL refuses
    to run as root). ``env`` and ``cwd`` default to this process's.
    """
    with open(log_path, "ab") as log:
        process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=detached, user=user, group=user, env=env, cwd=cwd,
            preexec_fn=None if detached or not sys.platform.startswith("linux") else _die_with_parent,
        )

    def check() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"{Path(command[0]).name} exited with code {process.returncode} before {what} answered: {log_tail(log_path)}")
        return ready()

    try:
        wait_until(check, timeout, f"{what} (log: {log_path})", interval=0.2)
    except BaseException:
        if process.poll() is None:
            terminate(process.pid, 10, reap=process)
        raise
    return process


class StateFile:
    """The record of a detached server (pid, port, host, ...) in ``<state dir>/<name>``."""

    def __init__(self, state_dir: Path, name: str, program: bytes) -> None:
        self.path = Path(state_dir) / name
        self.program = program

    def read(self) -> Optional[dict]:
        try:
            return json.loads(self.path.read_text())
        except (OSError, ValueError):
            return None

    def write(self, state: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(state))
        os.chmod(self.path, 0o600)  # it may hold credentials

    def running_pid(self) -> Optional[int]:
        """The recorded pid if that process is still the server."""
        state = self.read()
        pid = int(state["pid"]) if state and state.get("pid") else None
        return pid if pid is not None and runs(pid, self.program) else None

    def answering(self, answers: Callable[[dict], bool]) -> tuple[Optional[dict], bool]:
        """The recorded state, and whether its process is the server and ``answers(state)`` a real request."""
        state = self.read()
        if not state or self.running_pid() is None:
            return state, False
        try:
            return state, bool(answers(state))
        except Exception:
            return state, False

    def refuse_second(self, what: str, stop_command: str) -> None:
        """Refuse to start a second server on the same data while the recorded one lives without answering
        (still starting, or wedged)."""
        pid = self.running_pid()
        if pid is not None:
            state = self.read() or {}
            raise RuntimeError(
                f"{what} (pid {pid}) is recorded in {self.path.parent} but does not answer on "
                f"{state.get('host')}:{state.get('port')}; stop it with `{stop_command}` first"
            )

    def stop(self, timeout: float = 15) -> bool:
        """Stop the recorded server (only that pid) and forget it; True if one was running."""
        pid = self.running_pid()
        if pid is not None:
            terminate(pid, timeout)
        self.path.unlink(missing_ok=True)
        return pid is not None


class OwnedServer:
    """A server process owned by this process: a port (free by default), a data directory (a temporary
    one by default, removed at stop), started by the subclass's ``start`` and stopped by pid."""

    data_prefix = "kindling-server-"

    def __init__(self, port: Optional[int] = None, data_dir: Optional[Path] = None, host: str = "127.0.0.1") -> None:
        self.port = port
        self.host = host
        self.data_dir = Path(data_dir) if data_dir is not None else None
        self._own_data_dir = data_dir is None
        self._process: Optional[subprocess.Popen] = None
        self._log_path: Optional[Path] = None

    @property
    def pid(self) -> Optional[int]:
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _prepare(self) -> Path:
        """Choose the port and create the data directory; return the log file's path."""
        from kindling.local.ports import free_port

        if self.port is None:
            self.port = free_port()
        if self.data_dir is None:
            import tempfile

            self.data_dir = Path(tempfile.mkdtemp(prefix=self.data_prefix))
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self._log_path = self.data_dir / "server.log"
        return self._log_path

    def stop(self, timeout: float = 15) -> None:
        """Stop the server this object started (by pid: SIGTERM, then SIGKILL after ``timeout``)."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            terminate(process.pid, timeout, reap=process)
        if self._own_data_dir and self.data_dir is not None:
            import shutil

            shutil.rmtree(self.data_dir, ignore_errors=True)
            self.data_dir = None

    def start(self, timeout: float = 60) -> "OwnedServer":
        raise NotImplementedError

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
