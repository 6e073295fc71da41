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
