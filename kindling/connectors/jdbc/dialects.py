"""SQL dialects of the ``jdbc`` connector: MySQL/MariaDB (PyMySQL) and PostgreSQL (psycopg 3).

A dialect knows how to connect (and to say why it could not, without the password), how to quote a
name, what the table's columns are in the database and whether they fit the Flink DDL's types
(§1.4 of the connector spec), and how to write one micro-batch inside a transaction:

* MySQL: ``INSERT INTO t(c…) VALUES(…) ON DUPLICATE KEY UPDATE c=VALUES(c), …`` over every column
  (Flink's statement), sent by PyMySQL's ``executemany`` as multi-row statements of
  ``sink.buffer-flush.max-rows`` rows; deletes as ``DELETE FROM t WHERE (k…) IN ((…), …)``.
  Names are quoted with backticks.
* PostgreSQL: the rows are ``COPY``-ed into a temporary table, then one
  ``INSERT INTO t(c…) SELECT … ON CONFLICT (k…) DO UPDATE SET c=EXCLUDED.c`` (``DO NOTHING`` when
  every column is in the key) and one ``DELETE … USING``. Names are not quoted, as in Flink's
  PostgreSQL dialect (unquoted names fold to lower case).
"""

from __future__ import annotations

import datetime as dt
import io
from dataclasses import dataclass
from typing import Any, Iterator, Optional, Sequence

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StringType,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from kindling.connectors.jdbc.options import JdbcConfig
from kindling.options import OptionError

COMMITS_TABLE = "kindling_jdbc_commits"
CONNECT_TIMEOUT_S = 10


class JdbcError(OptionError):
    """The database refused, or the table does not fit the DDL: a message naming the option or column."""


@dataclass(frozen=True)
class DbColumn:
    """A column of the database table: its name, the database's type name and the type family it maps to."""

    name: str
    type_name: str
    family: str  # integer, float, decimal, boolean, string, binary, date, time, timestamp, timestamp_ltz, array, other


def spark_family(data_type: DataType) -> str:
    """The type family of a Flink DDL column (as Spark holds it)."""
    if isinstance(data_type, (ByteType, ShortType, IntegerType, LongType)):
        return "integer"
    if isinstance(data_type, (FloatType, DoubleType)):
        return "float"
    if isinstance(data_type, DecimalType):
        return "decimal"
    if isinstance(data_type, BooleanType):
        return "boolean"
    if isinstance(data_type, StringType):
        return "string"
    if isinstance(data_type, BinaryType):
        return "binary"
    if isinstance(data_type, DateType):
        return "date"
    if isinstance(data_type, (TimestampType, TimestampNTZType)):
        return "timestamp"
    if isinstance(data_type, ArrayType):
        return "array"
    return "other"


# Which database families can hold (and give back) a DDL family.
_FITS = {
    "integer": {"integer", "decimal", "boolean"},
    "float": {"float", "decimal"},
    "decimal": {"decimal", "integer", "float"},
    "boolean": {"boolean", "integer"},
    "string": {"string", "time", "other"},
    "binary": {"binary"},
    "date": {"date"},
    "timestamp": {"timestamp", "timestamp_ltz"},
    "array": {"array"},
}


class Dialect:
    """What differs between databases; one instance per connector config."""

    name: str

    def __init__(self, config: JdbcConfig) -> None:
        self.config = config

    # --- connecting -------------------------------------------------------------------------------
    def connect(self, autocommit: bool = False) -> Any:
        raise NotImplementedError

    def connect_checked(self, autocommit: bool = False) -> Any:
        """Connect, turning the client's error into one naming the options (never the password)."""
        try:
            return self.connect(autocommit)
        except Exception as exc:  # the client's own errors differ per library
            raise JdbcError(self._connect_message(exc)) from None

    def _connect_message(self, exc: Exception) -> str:
        text = self._scrub(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
        where = f"{self.config.location.host}:{self.config.location.port}"
        lowered = text.lower()
        if "password" in lowered or "access denied" in lowered or "authentication" in lowered:
            return (f"jdbc: cannot log in to {where} as '{self.config.username}': check options 'username' and "
                    f"'password' ({text})")
        if "database" in lowered and ("not exist" in lowered or "unknown" in lowered):
            return f"jdbc: the database named in option 'url' does not exist on {where} ({text})"
        return f"jdbc: cannot connect to {where} named in option 'url' ({text})"

    def _scrub(self, text: str) -> str:
        password = self.config.password
        return text.replace(password, "******") if password else text

    # --- names and statements ----------------------------------------------------------------------
    def quote(self, name: str) -> str:
        raise NotImplementedError

    @property
    def table(self) -> str:
        return self.quote(self.config.table)

    def columns(self, connection: Any) -> list[DbColumn]:
        """The table's columns in the database; an error naming 'table-name' if there is no such table."""
        raise NotImplementedError

    def check_schema(self, connection: Any, schema: StructType, writing: bool) -> list[DbColumn]:
        """Check the DDL's columns against the table: every one must exist with a type that fits."""
        self.check_types(schema)
        existing = {c.name.lower(): c for c in self.columns(connection)}
        for field in schema.fields:
            column = existing.get(field.name.lower())
            if column is None:
                raise JdbcError(f"jdbc: column '{field.name}' of the DDL does not exist in {self.config.describe()} "
                                f"(its columns: {', '.join(c.name for c in existing.values())})")
            family = spark_family(field.dataType)
            if column.family not in _FITS.get(family, set()):
                raise JdbcError(f"jdbc: column '{field.name}' is {field.dataType.simpleString().upper()} in the DDL but "
                                f"{column.type_name.upper()} in {self.config.describe()}: the types do not fit")
        if writing:
            for key in self.config.primary_key:
                if key.lower() not in existing:
                    raise JdbcError(f"jdbc: primary key column '{key}' does not exist in {self.config.describe()}")
        return [existing[f.name.lower()] for f in schema.fields]

    def check_types(self, schema: StructType) -> None:
        """Flink's dialect validation: types the dialect cannot hold are refused (its message)."""
        for field in schema.fields:
            data_type = field.dataType
            if isinstance(data_type, (MapType, StructType)) or (isinstance(data_type, ArrayType) and self.name != "PostgreSQL"):
                raise JdbcError(f"The {self.name} dialect doesn't support type: {data_type.simpleString().upper()}. "
                                f"(column '{field.name}')")

    def ensure_commits_table(self, connection: Any) -> None:
        raise NotImplementedError

    def claim_batch(self, cursor: Any, sink_id: str, batch_id: int, rows: int) -> bool:
        """Record ``batch_id`` for ``sink_id`` in this transaction; False if it is already committed."""
        raise NotImplementedError

    def upsert(self, cursor: Any, columns: Sequence[str], rows: pa.Table) -> None:
        raise NotImplementedError

    def insert(self, cursor: Any, columns: Sequence[str], rows: pa.Table) -> None:
        raise NotImplementedError

    def delete(self, cursor: Any, keys: pa.Table) -> None:
        raise NotImplementedError

    # --- reading ----------------------------------------------------------------------------------
    def scan(self, connection: Any, query: str, params: Sequence[Any]) -> Iterator[list[tuple]]:
        """Rows of ``query`` in chunks, streamed (never the whole result in memory)."""
        raise NotImplementedError

    @property
    def placeholder(self) -> str:
        return "%s"


# ----------------------------------------------------------------------------------------------
# MySQL / MariaDB
# ----------------------------------------------------------------------------------------------

_MYSQL_FAMILIES = {
    "tinyint": "integer", "smallint": "integer", "mediumint": "integer", "int": "integer", "integer": "integer",
    "bigint": "integer", "float": "float", "double": "float", "real": "float", "decimal": "decimal",
    "numeric": "decimal", "bit": "boolean", "boolean": "boolean", "char": "string", "varchar": "string",
    "tinytext": "string", "text": "string", "mediumtext": "string", "longtext": "string", "enum": "string",
    "set": "string", "json": "string", "binary": "binary", "varbinary": "binary", "tinyblob": "binary",
    "blob": "binary", "mediumblob": "binary", "longblob": "binary", "date": "date", "time": "time",
    "datetime": "timestamp", "timestamp": "timestamp", "year": "integer",
}


class MySQLDialect(Dialect):
    name = "MySQL"

    def connect(self, autocommit: bool = False) -> Any:
        import pymysql

        location = self.config.location
        props = self.config.properties
        timeout = int(props.get("connectTimeout", CONNECT_TIMEOUT_S * 1000)) // 1000 or CONNECT_TIMEOUT_S
        return pymysql.connect(host=location.host, port=location.port, user=self.config.username or "",
                               password=self.config.password or "", database=location.database,
                               connect_timeout=timeout, autocommit=autocommit, charset="utf8mb4",
                               local_infile=False)

    def quote(self, name: str) -> str:
        return "`" + name.replace("`", "``") + "`"

    def columns(self, connection: Any) -> list[DbColumn]:
        with connection.cursor() as cursor:
            cursor.execute("SELECT column_name, data_type, column_type FROM information_schema.columns "
                           "WHERE table_schema = DATABASE() AND table_name = %s ORDER BY ordinal_position",
                           (self.config.table,))
            rows = cursor.fetchall()
        if not rows:
            raise JdbcError(f"jdbc: {self.config.describe()} does not exist (option 'table-name')")
        columns = []
        for name, data_type, column_type in rows:
            data_type = str(data_type).lower()
            column_type = str(column_type).lower()
            family = _MYSQL_FAMILIES.get(data_type, "other")
            if column_type.startswith("tinyint(1)"):
                family = "boolean"
            columns.append(DbColumn(str(name), column_type, family))
        return columns

    def ensure_commits_table(self, connection: Any) -> None:
        with connection.cursor() as cursor:
            cursor.execute(f"CREATE TABLE IF NOT EXISTS {COMMITS_TABLE} (sink_id VARCHAR(190) NOT NULL, "
                           "batch_id BIGINT NOT NULL, row_count BIGINT NOT NULL, "
                           "committed_at TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), "
                           "PRIMARY KEY (sink_id, batch_id)) ENGINE=InnoDB")
        connection.commit()

    def claim_batch(self, cursor: Any, sink_id: str, batch_id: int, rows: int) -> bool:
        import pymysql

        try:
            cursor.execute(f"INSERT INTO {COMMITS_TABLE} (sink_id, batch_id, row_count) VALUES (%s, %s, %s)",
                           (sink_id, batch_id, rows))
        except pymysql.err.IntegrityError:
            return False
        return True

    def _chunks(self, rows: list[tuple]) -> Iterator[list[tuple]]:
        size = self.config.flush_max_rows or len(rows) or 1
        for start in range(0, len(rows), size):
            yield rows[start:start + size]

    def _values(self, table: pa.Table) -> list[tuple]:
        columns = [_python_values(table.column(i)) for i in range(table.num_columns)]
        return list(zip(*columns))

    def insert(self, cursor: Any, columns: Sequence[str], rows: pa.Table) -> None:
        names = ", ".join(self.quote(c) for c in columns)
        statement = f"INSERT INTO {self.table}({names}) VALUES ({', '.join(['%s'] * len(columns))})"
        for chunk in self._chunks(self._values(rows)):
            cursor.executemany(statement, chunk)

    def upsert(self, cursor: Any, columns: Sequence[str], rows: pa.Table) -> None:
        names = ", ".join(self.quote(c) for c in columns)
        updates = ", ".join(f"{self.quote(c)}=VALUES({self.quote(c)})" for c in columns)
        statement = (f"INSERT INTO {self.table}({names}) VALUES ({', '.join(['%s'] * len(columns))}) "
                     f"ON DUPLICATE KEY UPDATE {updates}")
        for chunk in self._chunks(self._values(rows)):
            cursor.executemany(statement, chunk)

    def delete(self, cursor: Any, keys: pa.Table) -> None:
        names = [self.quote(c) for c in keys.column_names]
        for chunk in self._chunks(self._values(keys)):
            if len(names) == 1:
                cursor.execute(f"DELETE FROM {self.table} WHERE {names[0]} IN ({', '.join(['%s'] * len(chunk))})",
                               [row[0] for row in chunk])
            else:
                group = "(" + ", ".join(["%s"] * len(names)) + ")"
                cursor.execute(f"DELETE FROM {self.table} WHERE ({', '.join(names)}) IN ({', '.join([group] * len(chunk))})",
                               [value for row in chunk for value in row])

    def scan(self, connection: Any, query: str, params: Sequence[Any]) -> Iterator[list[tuple]]:
        import pymysql.cursors

        size = self.config.fetch_size or 10_000
        with connection.cursor(pymysql.cursors.SSCursor) as cursor:  # unbuffered: rows stream from the server
            cursor.execute(query, tuple(params))
            while True:
                rows = cursor.fetchmany(size)
                if not rows:
                    return
                yield list(rows)


# ----------------------------------------------------------------------------------------------
# PostgreSQL
# ----------------------------------------------------------------------------------------------

_PG_FAMILIES = {
    "smallint": "integer", "integer": "integer", "bigint": "integer", "real": "float", "double precision": "float",
    "numeric": "decimal", "boolean": "boolean", "character": "string", "character varying": "string",
    "text": "string", "json": "string", "jsonb": "string", "uuid": "string", "bytea": "binary", "date": "date",
    "time without time zone": "time", "time with time zone": "time",
    "timestamp without time zone": "timestamp", "timestamp with time zone": "timestamp_ltz", "ARRAY": "array",
}


class PostgresDialect(Dialect):
    name = "PostgreSQL"

    def connect(self, autocommit: bool = False) -> Any:
        import psycopg

        location = self.config.location
        props = dict(self.config.properties)
        kwargs: dict[str, Any] = {}
        for key in ("sslmode", "application_name", "options"):
            if key in props:
                kwargs[key] = props[key]
        if "ApplicationName" in props:
            kwargs["application_name"] = props["ApplicationName"]
        timeout = int(props.get("connectTimeout", CONNECT_TIMEOUT_S))
        return psycopg.connect(host=location.host, port=location.port, dbname=location.database,
                               user=self.config.username, password=self.config.password, connect_timeout=timeout,
                               autocommit=autocommit, **kwargs)

    def quote(self, name: str) -> str:
        return name  # Flink's PostgreSQL dialect does not quote identifiers

    def _schema_and_table(self) -> tuple[Optional[str], str]:
        if "." in self.config.table:
            schema, table = self.config.table.split(".", 1)
            return schema, table
        return None, self.config.table

    def columns(self, connection: Any) -> list[DbColumn]:
        schema, table = self._schema_and_table()
        fold = (lambda s: s if s.startswith('"') else s.lower())
        rows = connection.execute(
            "SELECT column_name, data_type, udt_name FROM information_schema.columns "
            "WHERE table_schema = COALESCE(%s, current_schema()) AND table_name = %s ORDER BY ordinal_position",
            (fold(schema).strip('"') if schema else None, fold(table).strip('"'))).fetchall()
        connection.rollback()
        if not rows:
            raise JdbcError(f"jdbc: {self.config.describe()} does not exist (option 'table-name')")
        return [DbColumn(str(name), str(udt if data_type == "ARRAY" else data_type), _PG_FAMILIES.get(str(data_type), "other"))
                for name, data_type, udt in rows]

    def ensure_commits_table(self, connection: Any) -> None:
        connection.execute(f"CREATE TABLE IF NOT EXISTS {COMMITS_TABLE} (sink_id TEXT NOT NULL, batch_id BIGINT NOT NULL, "
                           "row_count BIGINT NOT NULL, committed_at TIMESTAMPTZ NOT NULL DEFAULT now(), "
                           "PRIMARY KEY (sink_id, batch_id))")
        connection.commit()

    def claim_batch(self, cursor: Any, sink_id: str, batch_id: int, rows: int) -> bool:
        cursor.execute(f"INSERT INTO {COMMITS_TABLE} (sink_id, batch_id, row_count) VALUES (%s, %s, %s) "
                       "ON CONFLICT DO NOTHING RETURNING 1", (sink_id, batch_id, rows))
        return cursor.fetchone() is not None

    def _stage(self, cursor: Any, name: str, columns: Sequence[str], rows: pa.Table) -> None:
        """A temporary table ``name`` shaped like the target's ``columns``, filled by COPY."""
        names = ", ".join(columns)
        cursor.execute(f"CREATE TEMPORARY TABLE {name} ON COMMIT DROP AS SELECT {names} FROM {self.table} WITH NO DATA")
        with cursor.copy(f"COPY {name} ({names}) FROM STDIN WITH (FORMAT csv)") as copy:
            for chunk in _csv_chunks(rows):
                copy.write(chunk)

    def insert(self, cursor: Any, columns: Sequence[str], rows: pa.Table) -> None:
        with cursor.copy(f"COPY {self.table} ({', '.join(columns)}) FROM STDIN WITH (FORMAT csv)") as copy:
            for chunk in _csv_chunks(rows):
                copy.write(chunk)

    def upsert(self, cursor: Any, columns: Sequence[str], rows: pa.Table) -> None:
        self._stage(cursor, "kindling_upserts", columns, rows)
        keys = self.config.primary_key
        others = [c for c in columns if c.lower() not in {k.lower() for k in keys}]
        action = ("DO UPDATE SET " + ", ".join(f"{c}=EXCLUDED.{c}" for c in others)) if others else "DO NOTHING"
        names = ", ".join(columns)
        cursor.execute(f"INSERT INTO {self.table} ({names}) SELECT {names} FROM kindling_upserts "
                       f"ON CONFLICT ({', '.join(keys)}) {action}")

    def delete(self, cursor: Any, keys: pa.Table) -> None:
        self._stage(cursor, "kindling_deletes", keys.column_names, keys)
        condition = " AND ".join(f"{self.table}.{k} = d.{k}" for k in keys.column_names)
        cursor.execute(f"DELETE FROM {self.table} USING kindling_deletes d WHERE {condition}")

    def scan(self, connection: Any, query: str, params: Sequence[Any]) -> Iterator[list[tuple]]:
        size = self.config.fetch_size or 10_000
        # A named (server-side) cursor inside a transaction: the server sends ``size`` rows per round trip.
        with connection.transaction(), connection.cursor(name="kindling_scan") as cursor:
            cursor.itersize = size
            cursor.execute(query, tuple(params))
            while True:
                rows = cursor.fetchmany(size)
                if not rows:
                    return
                yield rows


def dialect_for(config: JdbcConfig) -> Dialect:
    return PostgresDialect(config) if config.dialect == "postgresql" else MySQLDialect(config)


_reachable: set[tuple] = set()


def check_reachable(config: JdbcConfig) -> None:
    """The login works and ``table-name`` exists (checked once per process and table); errors name the option."""
    location = config.location
    key = (location.dialect, location.host, location.port, location.database, config.username, config.password, config.table)
    if key in _reachable:
        return
    dialect = dialect_for(config)
    connection = dialect.connect_checked()
    try:
        dialect.columns(connection)
    finally:
        connection.close()
    _reachable.add(key)


# ----------------------------------------------------------------------------------------------
# Arrow <-> database values
# ----------------------------------------------------------------------------------------------


def _python_values(column: pa.ChunkedArray) -> list[Any]:
    """A column as Python values a DB-API client takes (timestamps as naive UTC wall-clock datetimes)."""
    if pa.types.is_timestamp(column.type) and column.type.tz is not None:
        column = column.cast(pa.timestamp(column.type.unit))
    return column.to_pylist()


def _csv_ready(table: pa.Table) -> pa.Table:
    """Columns PostgreSQL's CSV COPY reads: bytes as ``\\x`` hex, timestamps as naive UTC."""
    columns = []
    for column in table.columns:
        if pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type):
            values = [None if v is None else "\\x" + v.hex() for v in column.to_pylist()]
            column = pa.chunked_array([pa.array(values, pa.string())])
        elif pa.types.is_timestamp(column.type) and column.type.tz is not None:
            column = column.cast(pa.timestamp(column.type.unit))
        elif pa.types.is_list(column.type):
            values = [None if v is None else _pg_array(v) for v in column.to_pylist()]
            column = pa.chunked_array([pa.array(values, pa.string())])
        columns.append(column)
    return pa.table(columns, names=table.column_names)


def _pg_array(values: list[Any]) -> str:
    def one(value: Any) -> str:
        if value is None:
            return "NULL"
        text = str(value).replace("\\", "\\\\").replace('"', '\\"')
        return f'"{text}"'

    return "{" + ",".join(one(v) for v in values) + "}"


def _csv_chunks(table: pa.Table, rows_per_chunk: int = 50_000) -> Iterator[bytes]:
    """CSV for COPY: strings always quoted (so '' stays an empty string), nulls as nothing (NULL)."""
    import pyarrow.csv as pacsv

    ready = _csv_ready(table)
    options = pacsv.WriteOptions(include_header=False, quoting_style="needed")
    for start in range(0, max(ready.num_rows, 1), rows_per_chunk):
        part = ready.slice(start, rows_per_chunk)
        if part.num_rows == 0:
            return
        sink = io.BytesIO()
        pacsv.write_csv(part, sink, write_options=options)
        yield sink.getvalue()


def to_arrow(rows: list[tuple], schema: pa.Schema) -> pa.RecordBatch:
    """Database rows as an Arrow batch of ``schema`` (naive timestamps read as UTC, times as text)."""
    columns = list(zip(*rows)) if rows else [()] * len(schema)
    arrays = []
    for field, values in zip(schema, columns):
        values = list(values)
        if pa.types.is_string(field.type):
            values = [v if v is None or isinstance(v, str) else _text(v) for v in values]
        elif pa.types.is_boolean(field.type):
            values = [None if v is None else bool(v) for v in values]
        elif pa.types.is_timestamp(field.type):
            values = [v.astimezone(dt.timezone.utc).replace(tzinfo=None) if isinstance(v, dt.datetime) and v.tzinfo else v
                      for v in values]
            arrays.append(pa.array(values, pa.timestamp("us")).cast(field.type) if field.type.tz else pa.array(values, field.type))
            continue
        elif pa.types.is_binary(field.type):
            values = [None if v is None else bytes(v) for v in values]
        arrays.append(pa.array(values, field.type))
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


def _text(value: Any) -> str:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).decode()
    if isinstance(value, dt.timedelta):  # MySQL TIME arrives as a timedelta
        seconds = int(value.total_seconds())
        return f"{seconds // 3600:02d}:{seconds % 3600 // 60:02d}:{seconds % 60:02d}"
    return str(value)


def non_null_keys(table: pa.Table) -> pa.Table:
    """Rows whose key columns are all set (a NULL key matches nothing in a DELETE)."""
    mask = None
    for column in table.columns:
        valid = pc.is_valid(column)
        mask = valid if mask is None else pc.and_(mask, valid)
    return table if mask is None else table.filter(mask)
