"""Batched lookups on a jdbc table: the rows of many keys in ONE query, for lookup joins and their caches.

Flink's ``JdbcRowDataLookupFunction`` runs ``SELECT <cols> FROM t WHERE k1 = ? AND k2 = ?`` per key;
a micro-batch engine does better asking once per batch of distinct keys:
``SELECT <cols> FROM t WHERE k IN (?, …)`` (one key column) or ``WHERE (k1, k2) IN ((?, ?), …)``.
A failed query is retried ``lookup.max-retries`` times, sleeping 1 s, 2 s, ... and reconnecting, as
Flink does. The SQL lookup join (:mod:`kindling.connectors.lookup`) asks it through the table's
cache (:mod:`kindling.connectors.lookup_cache`); ``scan`` loads the whole table for the FULL cache.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Hashable, Iterator, Optional, Sequence

import pyarrow as pa

from kindling.connectors.jdbc.dialects import Dialect, JdbcError, dialect_for, to_arrow
from kindling.connectors.jdbc.options import JdbcConfig
from kindling.connectors.lookup_cache import keyed_rows, with_retries

MAX_KEYS_PER_QUERY = 1000


class JdbcLookup:
    """``lookup(keys)`` -> ``{key: [row, ...]}`` for the columns ``columns`` by the key columns ``key_columns``.

    A key is a tuple of the key columns' values (a bare value when there is one key column); rows are
    tuples of ``columns``. Keys with a NULL never match (SQL equality), as in Flink. With ``key_schema``
    (the key columns' Arrow types) a key's values are as Arrow gives them, so a probe key read from an
    Arrow batch finds them (a NUMERIC key is a ``Decimal`` from the driver, an int in a BIGINT column)."""

    def __init__(self, config: JdbcConfig, key_columns: Sequence[str], columns: Sequence[str],
                 key_schema: Optional[pa.Schema] = None, sleep: Callable[[float], None] = time.sleep) -> None:
        if not key_columns:
            raise JdbcError("jdbc lookup needs at least one key column (an equality in the join's ON clause)")
        self.config = config
        self.options = config.options
        self.key_schema = key_schema
        self.sleep = sleep
        self.dialect: Dialect = dialect_for(config)
        self.key_columns = list(key_columns)
        self.columns = list(columns)
        self._connection: Optional[Any] = None
        self.queries = 0

    def _query(self, count: int) -> str:
        names = ", ".join(self.dialect.quote(c) for c in self.columns + self.key_columns)
        if len(self.key_columns) == 1:
            where = f"{self.dialect.quote(self.key_columns[0])} IN ({', '.join(['%s'] * count)})"
        else:
            group = "(" + ", ".join(["%s"] * len(self.key_columns)) + ")"
            where = f"({', '.join(self.dialect.quote(c) for c in self.key_columns)}) IN ({', '.join([group] * count)})"
        return f"SELECT {names} FROM {self.dialect.table} WHERE {where}"

    def lookup(self, keys: Sequence[Hashable]) -> dict[Hashable, list[tuple]]:
        """The rows of every key, fetched in one query per ``MAX_KEYS_PER_QUERY`` distinct keys."""
        single = len(self.key_columns) == 1
        distinct = [k for k in dict.fromkeys(keys) if (k is not None if single else None not in k)]
        result: dict[Hashable, list[tuple]] = {}
        for start in range(0, len(distinct), MAX_KEYS_PER_QUERY):
            chunk = distinct[start:start + MAX_KEYS_PER_QUERY]
            params = list(chunk) if single else [value for key in chunk for value in key]
            for key, row in self._keyed(self._run(self._query(len(chunk)), params)):
                result.setdefault(key, []).append(row)
        return result

    def scan(self) -> Iterator[tuple[Hashable, tuple]]:
        """Every row of the table with its key, for the FULL cache (NULL keys left out: they never match)."""
        names = ", ".join(self.dialect.quote(c) for c in self.columns + self.key_columns)
        rows = self._run(f"SELECT {names} FROM {self.dialect.table}", [])
        single = len(self.key_columns) == 1
        for key, row in self._keyed(rows):
            if (key is not None) if single else (None not in key):
                yield key, row

    def _keyed(self, rows: list[tuple]) -> list[tuple[Hashable, tuple]]:
        width = len(self.columns)
        return keyed_rows([tuple(row[width:]) for row in rows], [tuple(row[:width]) for row in rows], self.key_schema, to_arrow)

    def to_arrow(self, rows: list[tuple], schema: pa.Schema) -> pa.RecordBatch:
        return to_arrow(rows, schema)

    def _run(self, query: str, params: list[Any]) -> list[tuple]:
        retrying = False

        def run() -> list[tuple]:
            if self._connection is None:
                # a retry's new connection waits at most 'connection.max-retry-timeout' (whole seconds)
                timeout = int(self.config.max_retry_timeout.total_seconds()) if retrying else None
                self._connection = self.dialect.connect_checked(autocommit=True, timeout=timeout)
            cursor = self._connection.cursor()
            cursor.execute(query, params)
            rows = cursor.fetchall()
            cursor.close()
            self.queries += 1
            return [tuple(r) for r in rows]

        def failed(exc: Exception, attempts: int) -> Exception:
            return JdbcError(f"jdbc lookup on {self.config.describe()} failed after {attempts} attempt(s): "
                             f"{self.dialect._scrub(str(exc).strip())}")

        def reset() -> None:
            nonlocal retrying
            retrying = True
            self.close()

        return with_retries(run, self.config.lookup_max_retries, self.sleep, reset, failed)

    def close(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            try:
                connection.close()
            except Exception:  # a broken connection is gone either way
                pass
