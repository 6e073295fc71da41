"""A local MariaDB server (Debian's ``mariadb-server``) for the JDBC connector's MySQL dialect and the CLI.

``mariadb-install-db`` creates the system tables in ``<data dir>/data``; ``mariadbd --no-defaults``
runs them on 127.0.0.1 (no configuration file of the machine is read), socket and pid file in
``<data dir>/run``, names not resolved (clients are matched by address). The administrator
``root`` connects only through the socket; the login ``kindling``@``127.0.0.1`` with a generated
password has every privilege and the database ``kindling``. As root, ``--user=mysql`` makes the
server drop to the ``mysql`` system user. SIGTERM stops it cleanly.

``kindling local mysql start|stop|status [--port N]`` runs one detached, data in
``.kindling/local/mysql/``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from kindling.local import database
from kindling.local.database import LocalDatabase, find_program

DEFAULT_STATE_DIR = Path(".kindling/local/mysql")
DEFAULT_PORT = 3306


class LocalMySQL(LocalDatabase):
    """MariaDB on ``host:port`` speaking MySQL's protocol; ``url``, ``user``, ``password``, ``connect()``."""

    jdbc_scheme = "mysql"
    service = "MariaDB server"
    system_user = "mysql"
    program = b"mariadbd"
    data_prefix = "kindling-mysql-"

    @property
    def _datadir(self) -> Path:
        assert self.data_dir is not None
        return self.data_dir / "data"

    @property
    def _socket(self) -> str:
        assert self.data_dir is not None
        return str(self.data_dir / "run" / "mysqld.sock")

    def _user_args(self) -> list[str]:
        return ["--user=mysql"] if os.geteuid() == 0 else []

    def _initialised(self) -> bool:
        return (self._datadir / "mysql").is_dir()

    def _initialise(self) -> None:
        self._run([find_program("mariadb-install-db", "/usr/bin"), "--no-defaults", *self._user_args(),
                   f"--datadir={self._datadir}", "--auth-root-authentication-method=normal", "--skip-test-db",
                   "--skip-name-resolve"], "mariadb-install-db (creating the MariaDB data directory)")

    def _command(self) -> list[str]:
        assert self.data_dir is not None
        return [find_program("mariadbd", "/usr/sbin"), "--no-defaults", *self._user_args(), f"--datadir={self._datadir}",
                f"--bind-address={self.host}", f"--port={self.port}", f"--socket={self._socket}",
                f"--pid-file={self.data_dir / 'run' / 'mysqld.pid'}", "--skip-name-resolve",
                "--innodb-flush-log-at-trx-commit=2", "--innodb-buffer-pool-size=64M", "--max-connections=200",
                "--character-set-server=utf8mb4", "--collation-server=utf8mb4_bin"]

    def _admin_connect(self) -> Any:
        import pymysql

        return pymysql.connect(unix_socket=self._socket, user="root", password="", connect_timeout=2, autocommit=True)

    def _admin_answers(self) -> bool:
        connection = self._admin_connect()
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT 1")
                return cursor.fetchone() == (1,)
        finally:
            connection.close()

    def _provision(self) -> None:
        connection = self._admin_connect()
        try:
            with connection.cursor() as cursor:
                # Only the socket reaches root; nobody logs in over TCP without a password.
                cursor.execute("SELECT user, host FROM mysql.user WHERE NOT (user = 'root' AND host = 'localhost')")
                for user, host in cursor.fetchall():
                    if user != self.user:
                        cursor.execute("DROP USER %s@%s", (user, host))
                cursor.execute("CREATE USER IF NOT EXISTS %s@'127.0.0.1' IDENTIFIED BY %s", (self.user, self.password))
                cursor.execute("ALTER USER %s@'127.0.0.1' IDENTIFIED BY %s", (self.user, self.password))
                cursor.execute("GRANT ALL PRIVILEGES ON *.* TO %s@'127.0.0.1' WITH GRANT OPTION", (self.user,))
                cursor.execute(f"CREATE DATABASE IF NOT EXISTS `{self.database}`")
        finally:
            connection.close()

    def connect(self) -> Any:
        """A PyMySQL connection over TCP as ``kindling`` (autocommit off)."""
        import pymysql

        return pymysql.connect(host=self.host, port=self.port, user=self.user, password=self.password,
                               database=self.database, connect_timeout=5, autocommit=False)


def status(state_dir: Path = DEFAULT_STATE_DIR) -> dict:
    """The detached server's state: ``{running, pid, port, url, user}`` (never the password)."""
    return database.status(LocalMySQL, state_dir)


def start_background(port: int = DEFAULT_PORT, state_dir: Path = DEFAULT_STATE_DIR, host: str = "127.0.0.1") -> dict:
    """Start a detached MariaDB (data in ``state_dir/data``); its status plus ``password``."""
    return database.start_background(LocalMySQL, port, state_dir, host)


def stop_background(state_dir: Path = DEFAULT_STATE_DIR, timeout: float = 30) -> bool:
    """Stop the detached MariaDB recorded in ``state_dir`` (only that pid); True if one was stopped."""
    return database.stop_background(LocalMySQL, state_dir, timeout)
