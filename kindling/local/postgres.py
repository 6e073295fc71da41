"""A local PostgreSQL server (Debian's ``postgresql`` package) for the JDBC connector's tests and the CLI.

``initdb`` creates the cluster in ``<data dir>/pgdata`` (local connections trusted, TCP connections
by password), ``postgres`` runs it on 127.0.0.1 with ``fsync=off`` (a test server: fast, not
durable across a machine crash) and its socket in ``<data dir>/run``. The login ``kindling`` (a
superuser, with a generated password) owns the database ``kindling``. PostgreSQL refuses to run as
root: as root the server runs as the ``postgres`` system user. SIGINT is its fast shutdown.

``kindling local postgres start|stop|status [--port N]`` runs one detached, data in
``.kindling/local/postgres/``.
"""

from __future__ import annotations

import getpass
import os
import signal
from pathlib import Path
from typing import Any, Optional

from kindling.local import database
from kindling.local.database import LocalDatabase, find_program

DEFAULT_STATE_DIR = Path(".kindling/local/postgres")
DEFAULT_PORT = 5432
_BIN_DIRS = ("/usr/lib/postgresql/*/bin",)


class LocalPostgres(LocalDatabase):
    """PostgreSQL on ``host:port``; ``url``, ``user``, ``password`` and ``connect()`` for clients."""

    jdbc_scheme = "postgresql"
    service = "PostgreSQL server"
    system_user = "postgres"
    program = b"postgres"
    stop_signal = signal.SIGINT
    data_prefix = "kindling-postgres-"

    @property
    def _pgdata(self) -> Path:
        assert self.data_dir is not None
        return self.data_dir / "pgdata"

    @property
    def _admin(self) -> str:
        return "postgres" if os.geteuid() == 0 else getpass.getuser()

    def _run_as(self) -> Optional[str]:
        return "postgres" if os.geteuid() == 0 else None

    def _initialised(self) -> bool:
        return (self._pgdata / "PG_VERSION").exists()

    def _initialise(self) -> None:
        self._run([find_program("initdb", *_BIN_DIRS), "-D", str(self._pgdata), "-U", self._admin,
                   "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8"],
                  "initdb (creating the PostgreSQL data directory)")

    def _command(self) -> list[str]:
        assert self.data_dir is not None
        return [find_program("postgres", *_BIN_DIRS), "-D", str(self._pgdata),
                "-c", f"listen_addresses={self.host}", "-p", str(self.port),
                "-c", f"unix_socket_directories={self.data_dir / 'run'}", "-c", "fsync=off",
                "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=200",
                "-c", "max_prepared_transactions=50"]

    def _admin_connect(self, dbname: str = "postgres") -> Any:
        import psycopg

        assert self.data_dir is not None
        return psycopg.connect(host=str(self.data_dir / "run"), port=self.port, user=self._admin, dbname=dbname,
                               connect_timeout=2, autocommit=True)

    def _admin_answers(self) -> bool:
        with self._admin_connect() as connection:
            return connection.execute("SELECT 1").fetchone() == (1,)

    def _provision(self) -> None:
        from psycopg import sql

        with self._admin_connect() as connection:
            exists = connection.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (self.user,)).fetchone()
            verb = "ALTER" if exists else "CREATE"
            connection.execute(sql.SQL(verb + " ROLE {} LOGIN SUPERUSER PASSWORD {}").format(
                sql.Identifier(self.user), sql.Literal(self.password)))
            if connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", (self.database,)).fetchone() is None:
                connection.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(
                    sql.Identifier(self.database), sql.Identifier(self.user)))

    def connect(self) -> Any:
        """A psycopg connection over TCP as ``kindling`` (autocommit off)."""
        import psycopg

        return psycopg.connect(host=self.host, port=self.port, user=self.user, password=self.password,
                               dbname=self.database, connect_timeout=5)


def status(state_dir: Path = DEFAULT_STATE_DIR) -> dict:
    """The detached server's state: ``{running, pid, port, url, user}`` (never the password)."""
    return database.status(LocalPostgres, state_dir)


def start_background(port: int = DEFAULT_PORT, state_dir: Path = DEFAULT_STATE_DIR, host: str = "127.0.0.1") -> dict:
    """Start a detached PostgreSQL (data in ``state_dir/data``); its status plus ``password``."""
    return database.start_background(LocalPostgres, port, state_dir, host)


def stop_background(state_dir: Path = DEFAULT_STATE_DIR, timeout: float = 30) -> bool:
    """Stop the detached PostgreSQL recorded in ``state_dir`` (only that pid); True if one was stopped."""
    return database.stop_background(LocalPostgres, state_dir, timeout)
