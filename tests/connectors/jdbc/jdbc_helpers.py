"""Helpers for the jdbc tests: SQL WITH options for a local server, running statements, reading tables back."""

from __future__ import annotations

import uuid
from typing import Any


def table_name(prefix: str = "t") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


def with_options(server: Any, table: str, **extra: str) -> str:
    """``'connector' = 'jdbc', 'url' = ..., ...`` for a CREATE TABLE's WITH clause."""
    options = {"connector": "jdbc", **server.options(), "table-name": table, **extra}
    return ", ".join(f"'{k}' = '{v}'" for k, v in options.items())


def execute(server: Any, *statements: str) -> None:
    connection = server.connect()
    try:
        cursor = connection.cursor()
        for statement in statements:
            cursor.execute(statement)
        connection.commit()
    finally:
        connection.close()


def rows(server: Any, query: str) -> list[tuple]:
    connection = server.connect()
    try:
        cursor = connection.cursor()
        cursor.execute(query)
        return sorted(tuple(r) for r in cursor.fetchall())
    finally:
        connection.close()


ENVIRONMENT_FAILURE = "Python worker failed to connect back"


def run_job(start, db: Any = None, truncate: str | None = None, timeout: float = 900, attempts: int = 3) -> str:
    """Run a job (``start()`` returns something with ``wait``) to its end; a job that Spark failed to run
    because a Python worker did not start in time (a heavily loaded machine) is run again from an emptied
    table. Any other failure fails the test."""
    for attempt in range(attempts):
        try:
            result = start()
            return result.wait(timeout=timeout) if hasattr(result, "wait") else result.get_job_status()
        except Exception as exc:
            if ENVIRONMENT_FAILURE not in str(exc) or attempt == attempts - 1:
                raise
            if truncate is not None:
                execute(db, f"DELETE FROM {truncate}")
    raise AssertionError("unreachable")


def collect(env: Any, query: str, timeout: float = 900, attempts: int = 3) -> list:
    """The rows of a bounded SELECT, run again if Spark failed to start a Python worker in time."""
    for attempt in range(attempts):
        try:
            return env.execute_sql(query).final_rows(timeout=timeout)
        except Exception as exc:
            if ENVIRONMENT_FAILURE not in str(exc) or attempt == attempts - 1:
                raise
    raise AssertionError("unreachable")
