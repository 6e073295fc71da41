"""What the local PostgreSQL and MariaDB servers share: a data directory, a generated password, a JDBC URL.

A :class:`LocalDatabase` initialises its data directory once, starts the server on 127.0.0.1 on a
free (or given) port, waits until the server answers a real query as its administrator (through a
Unix socket inside the data directory), then creates the login ``kindling`` with a generated
password and the database ``kindling``. Clients connect over TCP with that login, as the JDBC
connector does.

As for every local service there are two ways to run one: owned by the calling process (tests,
benchmarks; ``stop()`` ends exactly that pid) or detached for the CLI
(``kindling local postgres|mysql start|stop|status``), recorded in a state file under
``.kindling/local/<service>/`` (mode 0600: it holds the password).

Running as root: the servers refuse to run as root (PostgreSQL) or drop to their own system user
(MariaDB), so the data directory is handed to that user, and every directory above it must be
traversable by others.
"""

from __future__ import annotations

import os
import secrets
import signal
import shutil
import subprocess
from pathlib import Path
from typing import Any, ClassVar, Optional

from kindling.local.process import OwnedServer, StateFile, start_and_wait, terminate

ADMIN_TIMEOUT_S = 2.0


def generate_password() -> str:
    """A random password of URL-safe characters (no quoting needed in a JDBC URL or SQL literal)."""
    return secrets.token_urlsafe(18).replace("-", "x").replace("_", "y")


def _as_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def hand_to(path: Path, user: str) -> None:
    """Give ``path`` (recursively) to the system ``user`` and check that user can reach it."""
    import pwd

    entry = pwd.getpwnam(user)
    for parent in list(path.resolve().parents):
        mode = parent.stat().st_mode
        if not mode & 0o001:
            raise RuntimeError(
                f"the database server runs as the system user {user!r}, which cannot enter {parent} "
                f"(mode {oct(mode & 0o777)}); put the data directory somewhere every user can traverse"
            )
    for root, dirs, files in os.walk(path):
        os.chown(root, entry.pw_uid, entry.pw_gid)
        for name in files:
            os.chown(os.path.join(root, name), entry.pw_uid, entry.pw_gid)


class LocalDatabase(OwnedServer):
    """A database server on ``host:port`` with the login ``kindling`` and the database ``kindling``."""

    # Set by each server module.
    jdbc_scheme: ClassVar[str]
    service: ClassVar[str]
    system_user: ClassVar[str]
    program: ClassVar[bytes]
    # The signal for a fast, clean shutdown (PostgreSQL's SIGTERM waits for every client to leave).
    stop_signal: ClassVar[int] = signal.SIGTERM
    user = "kindling"
    database = "kindling"

    def __init__(self, port: Optional[int] = None, data_dir: Optional[Path] = None, host: str = "127.0.0.1",
                 password: Optional[str] = None) -> None:
        super().__init__(port=port, data_dir=data_dir, host=host)
        self.password = password or generate_password()

    # --- what each server defines -------------------------------------------------------------
    def _initialise(self) -> None:
        """Create the server's files in the data directory (run once per data directory)."""
        raise NotImplementedError

    def _initialised(self) -> bool:
        raise NotImplementedError

    def _command(self) -> list[str]:
        raise NotImplementedError

    def _run_as(self) -> Optional[str]:
        """The system user the server process is started as (None: as this process)."""
        return None

    def _admin_answers(self) -> bool:
        """Whether the server answers a query from its administrator over the Unix socket."""
        raise NotImplementedError

    def _provision(self) -> None:
        """Create (or re-password) the ``kindling`` login and database."""
        raise NotImplementedError

    def connect(self) -> Any:
        """A DB-API connection over TCP as ``kindling`` to the ``kindling`` database."""
        raise NotImplementedError

    # --- shared ---------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The JDBC URL of the ``kindling`` database, as the ``jdbc`` connector's ``url`` option takes it."""
        return f"jdbc:{self.jdbc_scheme}://{self.host}:{self.port}/{self.database}"

    def options(self) -> dict[str, str]:
        """The ``jdbc`` connector options that reach this database (the password included: never log them)."""
        return {"url": self.url, "username": self.user, "password": self.password}

    def start(self, timeout: float = 90, detached: bool = False) -> "LocalDatabase":
        """Start the server (initialising its data directory the first time); return once it answers
        and the ``kindling`` login works."""
        if self.running:
            return self
        self._prepare()
        assert self.data_dir is not None and self._log_path is not None
        self.data_dir = self.data_dir.resolve()
        (self.data_dir / "run").mkdir(exist_ok=True)
        if _as_root():
            hand_to(self.data_dir, self.system_user)
        if not self._initialised():
            self._initialise()
        what = f"the local {self.service} on {self.host}:{self.port}"
        self._process = start_and_wait(self._command(), self._log_path, self._admin_answers, what, timeout,
                                       detached=detached, user=self._run_as())
        try:
            self._provision()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self, timeout: float = 30) -> None:
        """Stop the server this object started (its fast shutdown signal, then SIGTERM/SIGKILL)."""
        if self.running and self.pid is not None:
            try:
                os.kill(self.pid, self.stop_signal)
            except ProcessLookupError:
                pass
        super().stop(timeout)

    def _run(self, command: list[str], what: str) -> None:
        """Run a setup command (as the server's user when needed); fail with its output."""
        result = subprocess.run(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                user=self._run_as(), group=self._run_as(), cwd=str(self.data_dir), timeout=300)
        if result.returncode != 0:
            raise RuntimeError(f"{what} failed (exit code {result.returncode}): "
                               f"{result.stdout.decode(errors='replace')[-2000:]}")

    def __repr__(self) -> str:  # never the password
        return f"{type(self).__name__}({self.host}:{self.port}, {'running' if self.running else 'stopped'})"


def find_program(name: str, *directories: str) -> str:
    """A server program on the PATH or in one of ``directories``; an error saying what to install."""
    found = shutil.which(name)
    if found:
        return found
    for directory in directories:
        for candidate in sorted(Path("/").glob(directory.lstrip("/")), reverse=True):
            if (candidate / name).exists():
                return str(candidate / name)
    raise RuntimeError(f"{name} is not installed: run `make setup` (it installs the Debian packages "
                       "'postgresql' and 'mariadb-server') or apt-get install them")


# ----------------------------------------------------------------------------------------------
# Detached servers for the CLI: `kindling local postgres|mysql start|stop|status [--port N]`
# ----------------------------------------------------------------------------------------------

_STATE_FILE = "server.json"


def _state(server_class: type[LocalDatabase], state_dir: Path) -> StateFile:
    return StateFile(Path(state_dir), _STATE_FILE, server_class.program)


def _answers(server_class: type[LocalDatabase], state: dict) -> bool:
    server = server_class(port=int(state["port"]), data_dir=Path(state["data_dir"]), host=state.get("host", "127.0.0.1"),
                          password=state["password"])
    connection = server.connect()
    connection.close()
    return True


def status(server_class: type[LocalDatabase], state_dir: Path) -> dict:
    """The detached server's state: ``{running, pid, port, url, user}`` (never the password)."""
    state, running = _state(server_class, state_dir).answering(lambda st: _answers(server_class, st))
    if not state:
        return {"running": False, "pid": None, "port": None, "url": None, "user": None}
    url = f"jdbc:{server_class.jdbc_scheme}://{state.get('host', '127.0.0.1')}:{state.get('port')}/{server_class.database}"
    return {"running": running, "pid": state.get("pid"), "port": state.get("port"), "url": url, "user": server_class.user}


def start_background(server_class: type[LocalDatabase], port: int, state_dir: Path, host: str = "127.0.0.1",
                     timeout: float = 90) -> dict:
    """Start a detached server that outlives this process (data in ``state_dir/data``); return its status
    plus ``password``. A running recorded server is reported with ``already_running=True``."""
    state_dir = Path(state_dir)
    record = _state(server_class, state_dir)
    current = status(server_class, state_dir)
    if current["running"]:
        return {**current, "password": (record.read() or {}).get("password"), "already_running": True}
    record.refuse_second(f"a local {server_class.service}", f"kindling local {server_class.jdbc_scheme} stop")
    previous = record.read() or {}
    data_dir = (state_dir / "data").resolve()
    server = server_class(port=port, data_dir=data_dir, host=host, password=previous.get("password"))
    server.start(timeout=timeout, detached=True)
    assert server.pid is not None
    record.write({"pid": server.pid, "port": port, "host": host, "password": server.password, "data_dir": str(data_dir)})
    server._process = None  # detached: it is the state file's now
    return {**status(server_class, state_dir), "password": server.password, "already_running": False}


def stop_background(server_class: type[LocalDatabase], state_dir: Path, timeout: float = 30) -> bool:
    """Stop the detached server recorded in ``state_dir`` (only that pid); the data and password stay."""
    record = _state(server_class, state_dir)
    pid = record.running_pid()
    if pid is None:
        state = record.read()
        if state:
            record.write({**state, "pid": None})
        return False
    try:
        os.kill(pid, server_class.stop_signal)
    except ProcessLookupError:
        pass
    terminate(pid, timeout)
    record.write({**(record.read() or {}), "pid": None})
    return True
