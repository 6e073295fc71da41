"""The ``jdbc`` sink: every micro-batch written in one database transaction with its batch id (exactly-once).

Executors (``write``) only gather their rows: the task's Arrow batches (user columns and, for an
updating query, ``__kindling_rowkind``) travel back as one zstd-compressed Arrow IPC stream in the commit
message. The driver's ``commit(messages, batch_id)`` then, in ONE transaction:

1. inserts ``(sink id, batch id)`` into ``kindling_jdbc_commits`` (created on first use); if the
   row is already there the batch was committed before a crash and is being replayed: roll back,
   skip. A concurrent replay blocks on that row's lock and then finds it;
2. append mode (no PRIMARY KEY): inserts every row (PostgreSQL ``COPY``, MySQL multi-row INSERTs of
   ``sink.buffer-flush.max-rows`` rows);
   upsert mode (``PRIMARY KEY ... NOT ENFORCED``): reduces the batch per key, the last change
   winning (Flink's ``TableBufferReducedStatementExecutor``), upserts the ``+I``/``+U`` keys and
   deletes the ``-D`` and ``-U`` keys. As in Flink, a ``-U`` is a delete: it reaches the sink
   without its ``+U`` only when a filter over an updating query dropped the new row (Flink's planner
   then sends the sink the retractions it otherwise leaves out); followed by its ``+U`` it changes nothing;
3. commits. Rows and marker become visible together or not at all.

A failed transaction is retried ``sink.max-retries`` times (sleeping 1 s, 2 s, ... and
reconnecting, as Flink's ``JdbcOutputFormat.flush``); the marker makes the retry safe.

Why not XA / ``PREPARE TRANSACTION`` on the executors: a Spark task may be retried or run
speculatively, so several prepared transactions could exist for one partition, and the driver would
have to pick exactly one per partition and roll back the rest, and after a driver crash recover
them by a global transaction id scan (``pg_prepared_xacts`` / ``XA RECOVER``), needing
``max_prepared_transactions > 0`` on PostgreSQL and ``XA_RECOVER_ADMIN`` on MySQL. The driver
transaction needs none of that and is atomic by construction; its cost is that a micro-batch's rows
pass through the driver (keep batches to what the driver holds; ``COPY`` keeps it fast).

The sink id is the table name plus the Spark query's id, read from the checkpoint's ``metadata``
file: stable across restarts of one checkpoint, new for a new checkpoint, so a job started from
scratch never mistakes its batch 0 for an old one.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSourceStreamArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from kindling.connectors.base import INTERNAL_PREFIX, ROWKIND_COLUMN, pack_batches, unpack_table
from kindling.connectors.jdbc.dialects import COMMITS_TABLE, Dialect, JdbcError, dialect_for, non_null_keys
from kindling.connectors.jdbc.options import JdbcConfig, jdbc_config
from kindling.options import OptionError

log = logging.getLogger(__name__)

APPEND_ONLY_MESSAGE = "please declare primary key for sink table when query contains update/delete record"
_ORDER = "__kindling_order"

# The driver's connections, kept while the process lives (one per database and login).
_connections: dict[tuple, Any] = {}
_checked: set[tuple] = set()
_lock = threading.Lock()


@dataclass
class JdbcCommitMessage(WriterCommitMessage):
    """One task's rows for the driver's transaction (an Arrow IPC stream, zstd-compressed)."""

    partition: int
    rows: int
    data: Optional[bytes] = None

    def table(self) -> Optional[pa.Table]:
        return unpack_table(self.data) if self.data else None


_RETRACTIONS = pa.array(["-D", "-U"])


def reduce_changes(table: pa.Table, keys: tuple[str, ...]) -> tuple[pa.Table, pa.Table]:
    """The batch reduced per primary key (the last change wins): (rows to upsert, keys to delete).

    Rows arrive in the order the tasks produced them, tasks in partition order (Spark sends every
    change of one key to one partition, in order)."""
    # Every key once (an insert stream's usual batch) needs no reduction: one hash pass instead of a group-by.
    if not (len(keys) == 1 and len(pc.unique(table.column(keys[0]))) == table.num_rows):
        table = _last_change_per_key(table, keys)
    if ROWKIND_COLUMN not in table.column_names:  # inserts only
        return table, table.select(list(keys)).slice(0, 0)
    deleted = pc.fill_null(pc.is_in(table.column(ROWKIND_COLUMN), value_set=_RETRACTIONS), False)
    upserts = table.filter(pc.invert(deleted)).drop_columns([ROWKIND_COLUMN])
    deletes = non_null_keys(table.filter(deleted).select(list(keys)))
    return upserts, deletes


def _last_change_per_key(table: pa.Table, keys: tuple[str, ...]) -> pa.Table:
    """The rows holding each key's last change, in the order they came."""
    positions = pa.array(np.arange(table.num_rows, dtype=np.int64))
    # The last change's position per key (grouping the key columns only; the groups' order does not matter, so
    # threads may share the work), then those rows in the order they came.
    grouped = table.select(list(keys)).append_column(_ORDER, positions).group_by(list(keys), use_threads=True)
    last = grouped.aggregate([(_ORDER, "max")]).column(_ORDER + "_max")
    return table.take(pc.take(last, pc.sort_indices(last)))


def sink_identity(options: dict[str, str], config: JdbcConfig) -> str:
    """``<table>@<query id>``: the Spark query's id from its checkpoint, else the checkpoint path."""
    checkpoint = next((v for k, v in options.items() if k.lower() == "checkpointlocation"), None)
    if not checkpoint:
        return f"{config.table}@default"
    try:
        query_id = json.loads(Path(checkpoint.removeprefix("file:"), "metadata").read_text().splitlines()[0])["id"]
        return f"{config.table}@{query_id}"
    except (OSError, ValueError, KeyError, IndexError):
        return f"{config.table}@{checkpoint}"[:190]


def last_committed_batch(config: JdbcConfig, sink_id: str) -> Optional[int]:
    """The last micro-batch the sink ``sink_id`` committed to the database, None if none yet.

    Read in a transaction of its own: a reconciliation reads it before and after reading the table, and a batch
    commits its rows and its marker together, so an unchanged marker means that the table was read as it stood after
    that batch."""
    dialect = dialect_for(config)
    connection = dialect.connect_checked(autocommit=True)
    try:
        dialect.ensure_commits_table(connection)
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT MAX(batch_id) FROM {COMMITS_TABLE} WHERE sink_id = %s", (sink_id,))
            row = cursor.fetchone()
        return None if row is None or row[0] is None else int(row[0])
    finally:
        connection.close()


class JdbcStreamWriter(DataSourceStreamArrowWriter):
    """Executors gather rows; the driver commits them with the batch id in one transaction."""

    def __init__(self, options: dict[str, str], schema: StructType) -> None:
        self.options = dict(options)
        self.config = jdbc_config(options)
        self.columns = [f.name for f in schema.fields if not f.name.startswith(INTERNAL_PREFIX)]
        self.changelog = ROWKIND_COLUMN in schema.fieldNames()
        if self.changelog and not self.config.primary_key:
            raise OptionError(APPEND_ONLY_MESSAGE)
        missing = [k for k in self.config.primary_key if k not in self.columns]
        if missing:
            raise OptionError(f"jdbc sink: primary key column '{missing[0]}' is not a column of the table "
                              f"({', '.join(self.columns)})")
        user_schema = StructType([f for f in schema.fields if not f.name.startswith(INTERNAL_PREFIX)])
        check_table(self.config, user_schema)

    def write(self, iterator: Iterator[pa.RecordBatch]) -> JdbcCommitMessage:
        from pyspark import TaskContext

        keep = self.columns + ([ROWKIND_COLUMN] if self.changelog else [])
        batches = []
        rows = 0
        for batch in iterator:
            batch = batch.select(keep)
            rows += batch.num_rows
            batches.append(batch)
        context = TaskContext.get()
        return JdbcCommitMessage(context.partitionId() if context is not None else 0, rows, pack_batches(batches))

    def commit(self, messages: list[Optional[JdbcCommitMessage]], batchId: int) -> None:
        """Write the batch's rows and its marker in one transaction; skip a batch already committed."""
        tables = [m.table() for m in sorted((m for m in messages if m is not None), key=lambda m: m.partition)]
        tables = [t for t in tables if t is not None and t.num_rows]
        if not tables:
            return
        table = pa.concat_tables(tables, promote_options="permissive")
        commit_batch(self.config, sink_identity(self.options, self.config), batchId, table, self.columns)

    def abort(self, messages: list[Optional[JdbcCommitMessage]], batchId: int) -> None:
        """Nothing was written by the executors: nothing to undo."""


def _connection_key(config: JdbcConfig) -> tuple:
    location = config.location
    return (location.dialect, location.host, location.port, location.database, config.username, config.password)


def check_table(config: JdbcConfig, schema: StructType, writing: bool = True) -> None:
    """On the driver at start: the login works, the table exists, its columns fit the DDL (once per process)."""
    key = (_connection_key(config), config.table, schema.json(), writing)
    if key in _checked:
        return
    dialect = dialect_for(config)
    connection = dialect.connect_checked()
    try:
        dialect.check_schema(connection, schema, writing)
        if writing:
            dialect.ensure_commits_table(connection)
    finally:
        connection.close()
    _checked.add(key)


def _connection(dialect: Dialect, timeout: Optional[int] = None) -> Any:
    key = _connection_key(dialect.config)
    with _lock:
        connection = _connections.get(key)
        if connection is None or getattr(connection, "closed", False):
            connection = dialect.connect_checked(timeout=timeout)
            _connections[key] = connection
        return connection


def _drop_connection(dialect: Dialect) -> None:
    with _lock:
        connection = _connections.pop(_connection_key(dialect.config), None)
    if connection is not None:
        try:
            connection.close()
        except Exception:  # closing a broken connection may fail too; it is gone either way
            pass


def commit_batch(config: JdbcConfig, sink_id: str, batch_id: int, table: pa.Table, columns: list[str]) -> bool:
    """Apply one micro-batch and record ``batch_id`` in one transaction; False if it was committed before."""
    dialect = dialect_for(config)
    if config.primary_key:
        upserts, deletes = reduce_changes(table, config.primary_key)
    else:
        if ROWKIND_COLUMN in table.column_names:
            kinds = pc.fill_null(table.column(ROWKIND_COLUMN), "+I")
            if not pc.all(pc.equal(kinds, "+I")).as_py():
                raise OptionError(APPEND_ONLY_MESSAGE)
            table = table.drop_columns([ROWKIND_COLUMN])
        upserts, deletes = table.select(columns), None
    attempts = config.sink_max_retries + 1
    for attempt in range(1, attempts + 1):
        connection = None
        try:
            # a retry's new connection waits at most 'connection.max-retry-timeout' (whole seconds, as Flink reads it)
            retry_timeout = int(config.max_retry_timeout.total_seconds()) if attempt > 1 else None
            connection = _connection(dialect, retry_timeout)
            with connection.cursor() as cursor:
                if not dialect.claim_batch(cursor, sink_id, batch_id, table.num_rows):
                    connection.rollback()
                    log.info("jdbc sink: batch %d of %s is already committed (a replay): skipped", batch_id, sink_id)
                    return False
                if upserts.num_rows:
                    if config.primary_key:
                        dialect.upsert(cursor, upserts.column_names, upserts)
                    else:
                        dialect.insert(cursor, upserts.column_names, upserts)
                if deletes is not None and deletes.num_rows:
                    dialect.delete(cursor, deletes)
            connection.commit()
            return True
        except JdbcError:
            _drop_connection(dialect)
            raise
        except Exception as exc:  # the client's errors: retry, then fail with the database's message
            if connection is not None:
                try:
                    connection.rollback()
                except Exception:  # a broken connection cannot roll back; dropping it aborts the transaction
                    pass
            _drop_connection(dialect)
            if attempt >= attempts:
                raise JdbcError(f"jdbc sink: writing batch {batch_id} to {config.describe()} failed after "
                                f"{attempts} attempt(s): {dialect._scrub(str(exc).strip())}") from None
            log.warning("jdbc sink: attempt %d to write batch %d failed (%s); retrying", attempt, batch_id,
                        dialect._scrub(str(exc).strip()))
            time.sleep(attempt)
    return False
