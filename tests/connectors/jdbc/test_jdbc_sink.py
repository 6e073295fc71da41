"""The jdbc sink against real PostgreSQL and MariaDB: append, upsert, delete, a GROUP BY changelog, types."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import sys
from decimal import Decimal

import pytest

from kindling.connectors import Sink
from kindling.connectors.base import ROWKIND_COLUMN

sys.path.insert(0, os.path.dirname(__file__))
from jdbc_helpers import collect, execute, rows, run_job, table_name, with_options  # noqa: E402

pytestmark = pytest.mark.integration

DATABASES = ["postgres", "mysql"]


def _collection(env, name: str, data: list, columns: str, per_batch: int = 4) -> None:
    env.execute_sql(f"CREATE TABLE {name} ({columns}) WITH ('connector' = 'collection', 'rows-per-batch' = '{per_batch}', "
                    f"'data' = '{json.dumps(data)}')")


def test_append_without_primary_key(env, db):
    target = table_name("append")
    execute(db, f"CREATE TABLE {target} (id BIGINT, name VARCHAR(20))")
    _collection(env, "src", [[i, f"n{i}"] for i in range(7)] + [[7, None]], "id BIGINT, name STRING")
    env.execute_sql(f"CREATE TABLE out_t (id BIGINT, name STRING) WITH ({with_options(db, target)})")
    assert run_job(lambda: env.execute_sql("INSERT INTO out_t SELECT id, name FROM src"), db, target) == "FINISHED"
    assert rows(db, f"SELECT id, name FROM {target}") == [(i, f"n{i}") for i in range(7)] + [(7, None)]


def test_updating_query_needs_a_primary_key(env, db):
    from kindling.sql import SqlError

    target = table_name("nokey")
    execute(db, f"CREATE TABLE {target} (k VARCHAR(10), n BIGINT)")
    _collection(env, "src", [["a"], ["b"], ["a"]], "k STRING")
    env.execute_sql(f"CREATE TABLE out_t (k STRING, n BIGINT) WITH ({with_options(db, target)})")
    with pytest.raises(SqlError, match="please declare primary key for sink table when query contains update/delete record"):
        env.execute_sql("INSERT INTO out_t SELECT k, COUNT(*) FROM src GROUP BY k")


def test_upserts_and_deletes_reduced_per_key(env, db):
    """A changelog with updates and deletes, several changes of one key inside one micro-batch."""
    from pyspark.sql import functions as F

    target = table_name("upsert")
    execute(db, f"CREATE TABLE {target} (account BIGINT PRIMARY KEY, province VARCHAR(20), total BIGINT)")
    changelog = [
        (1, "Beijing", 10, "+I"), (2, "Shanghai", 5, "+I"), (1, "Beijing", 10, "-U"), (1, "Beijing", 25, "+U"),
        (3, "Hubei", 7, "+I"), (2, "Shanghai", 5, "-D"), (3, "Hubei", 7, "-U"), (3, "Hubei", 9, "+U"),
        (4, "Hebei", 1, "+I"), (4, "Hebei", 1, "-D"), (5, "Henan", 2, "+I"),
    ]
    stream = env.from_collection(changelog, "account BIGINT, province STRING, total BIGINT, kind STRING", rows_per_batch=6)
    out = stream.map(F.col("account"), F.col("province"), F.col("total"), F.col("kind").alias(ROWKIND_COLUMN))
    options = {"url": db.url, "username": db.user, "password": db.password, "table-name": target,
               "kindling.table.primary-key": "account", "sink.buffer-flush.max-rows": "2"}

    def start():
        out.sink_to(Sink("jdbc", options))
        return env.execute("jdbc-upsert")

    assert run_job(start, db, target) == "FINISHED"
    assert rows(db, f"SELECT account, province, total FROM {target}") == [(1, "Beijing", 25), (3, "Hubei", 9), (5, "Henan", 2)]


def test_unbounded_group_by_kept_in_a_table_equals_the_final_result(env, db):
    target = table_name("counts")
    execute(db, f"CREATE TABLE {target} (word VARCHAR(20) PRIMARY KEY, n BIGINT, total BIGINT)")
    words = [["a", 1], ["b", 2], ["a", 3], ["c", 4], ["b", 5], ["a", 6], ["d", 7], ["c", 8], ["a", 9]]
    _collection(env, "words", words, "word STRING, v BIGINT", per_batch=3)
    env.execute_sql(f"CREATE TABLE counts (word STRING, n BIGINT, total BIGINT, PRIMARY KEY (word) NOT ENFORCED) "
                    f"WITH ({with_options(db, target)})")
    assert run_job(lambda: env.execute_sql("INSERT INTO counts SELECT word, COUNT(*), SUM(v) FROM words GROUP BY word"),
                   db, target) == "FINISHED"
    assert rows(db, f"SELECT word, n, total FROM {target}") == [("a", 4, 19), ("b", 2, 7), ("c", 2, 12), ("d", 1, 7)]


def test_filter_over_an_aggregation_deletes_rows_that_leave_it(env, db):
    words = [["a", 1], ["b", 2], ["a", 3], ["c", 4], ["b", 5], ["a", 6], ["d", 7], ["c", 8], ["a", 9]]
    _collection(env, "words", words, "word STRING, v BIGINT", per_batch=3)
    # a filter over the aggregation retracts rows: deletes reach the table
    filtered = table_name("small")
    execute(db, f"CREATE TABLE {filtered} (word VARCHAR(20) PRIMARY KEY, n BIGINT)")
    env.execute_sql(f"CREATE TABLE small (word STRING, n BIGINT, PRIMARY KEY (word) NOT ENFORCED) WITH ({with_options(db, filtered)})")
    assert run_job(lambda: env.execute_sql("INSERT INTO small SELECT word, n FROM (SELECT word, COUNT(*) AS n FROM words "
                                           "GROUP BY word) WHERE n < 2"), db, filtered) == "FINISHED"
    assert rows(db, f"SELECT word, n FROM {filtered}") == [("d", 1)]


# Flink's type tables (connectors.md §1.4): (column, database type, Flink type, value written, value read back).
# Every database type of the tables has a column; the DDL declares the Flink type Flink maps it to.
WHEN = dt.datetime(2024, 2, 29, 13, 45, 30, 125000)
MYSQL_TYPES = [
    ("ti", "TINYINT", "TINYINT", -7, -7),
    ("tu", "TINYINT UNSIGNED", "SMALLINT", 200, 200),
    ("sm", "SMALLINT", "SMALLINT", -300, -300),
    ("su", "SMALLINT UNSIGNED", "INT", 60000, 60000),
    ("mi", "MEDIUMINT", "INT", -8000000, -8000000),
    ("n", "INT", "INT", 123456, 123456),
    ("iu", "INT UNSIGNED", "BIGINT", 4000000000, 4000000000),
    ("l", "BIGINT", "BIGINT", 9007199254740993, 9007199254740993),
    ("lu", "BIGINT UNSIGNED", "DECIMAL(20, 0)", Decimal("18446744073709551615"), Decimal("18446744073709551615")),
    ("f", "FLOAT", "FLOAT", 1.5, 1.5),
    ("d", "DOUBLE", "DOUBLE", 2.25, 2.25),
    ("dp", "DOUBLE PRECISION", "DOUBLE", -0.125, -0.125),
    ("m", "DECIMAL(10,2)", "DECIMAL(10, 2)", Decimal("12345678.91"), Decimal("12345678.91")),
    ("nm", "NUMERIC(5,1)", "DECIMAL(5, 1)", Decimal("-1234.5"), Decimal("-1234.5")),
    ("b", "BOOLEAN", "BOOLEAN", True, True),
    ("t1", "TINYINT(1)", "BOOLEAN", False, False),
    ("dy", "DATE", "DATE", dt.date(2024, 2, 29), dt.date(2024, 2, 29)),
    ("tm", "TIME", "TIME(0)", "13:45:30", dt.time(13, 45, 30)),  # collected as PyFlink collects a TIME
    ("tm3", "TIME(3)", "TIME(3)", "13:45:30.125", dt.time(13, 45, 30, 125000)),
    ("ts", "DATETIME(6)", "TIMESTAMP(6)", WHEN, WHEN),
    ("ts0", "DATETIME", "TIMESTAMP(0)", WHEN.replace(microsecond=0), WHEN.replace(microsecond=0)),
    ("tp", "TIMESTAMP(3) NULL", "TIMESTAMP(3)", WHEN, WHEN),
    ("c", "CHAR(5)", "STRING", "abc", "abc"),  # MySQL drops a CHAR's trailing spaces when read
    ("s", "VARCHAR(30)", "STRING", "héllo 'quoted'", "héllo 'quoted'"),
    ("t", "TEXT", "STRING", "", ""),
    ("bn", "BINARY(4)", "BYTES", bytes([0, 1, 2, 255]), bytes([0, 1, 2, 255])),
    ("vb", "VARBINARY(20)", "BYTES", b"\x00abc", b"\x00abc"),
    ("bl", "BLOB", "BYTES", bytes(range(256)), bytes(range(256))),
]
POSTGRES_TYPES = [
    ("sm", "SMALLINT", "SMALLINT", -300, -300),
    ("i2", "INT2", "SMALLINT", 32767, 32767),
    ("n", "INTEGER", "INT", 123456, 123456),
    ("l", "BIGINT", "BIGINT", 9007199254740993, 9007199254740993),
    ("f", "REAL", "FLOAT", 1.5, 1.5),
    ("f4", "FLOAT4", "FLOAT", -0.5, -0.5),
    ("d", "DOUBLE PRECISION", "DOUBLE", 2.25, 2.25),
    ("f8", "FLOAT8", "DOUBLE", -0.125, -0.125),
    ("m", "NUMERIC(10,2)", "DECIMAL(10, 2)", Decimal("12345678.91"), Decimal("12345678.91")),
    ("dm", "DECIMAL(38,18)", "DECIMAL(38, 18)", Decimal("12345678901234567890.123456789012345678"),
     Decimal("12345678901234567890.123456789012345678")),
    ("b", "BOOLEAN", "BOOLEAN", True, True),
    ("dy", "DATE", "DATE", dt.date(2024, 2, 29), dt.date(2024, 2, 29)),
    ("tm", "TIME(0)", "TIME(0)", "13:45:30", dt.time(13, 45, 30)),  # collected as PyFlink collects a TIME
    ("tm3", "TIME(3) WITHOUT TIME ZONE", "TIME(3)", "13:45:30.125", dt.time(13, 45, 30, 125000)),
    ("ts", "TIMESTAMP(6)", "TIMESTAMP(6)", WHEN, WHEN),
    ("ts3", "TIMESTAMP(3) WITHOUT TIME ZONE", "TIMESTAMP(3)", WHEN, WHEN),
    ("tz", "TIMESTAMP WITH TIME ZONE", "TIMESTAMP_LTZ(6)", WHEN.replace(tzinfo=dt.timezone.utc), WHEN),
    ("c", "CHAR(5)", "STRING", "abc", "abc  "),  # PostgreSQL pads a CHAR(n) (so does Flink reading it)
    ("ch", "CHARACTER(3)", "STRING", "xyz", "xyz"),
    ("s", "VARCHAR(30)", "STRING", "héllo 'quoted'", "héllo 'quoted'"),
    ("cv", "CHARACTER VARYING(30)", "STRING", 'say "hi", {x}', 'say "hi", {x}'),
    ("t", "TEXT", "STRING", "", ""),
    ("y", "BYTEA", "BYTES", bytes([0, 1, 2, 255]), bytes([0, 1, 2, 255])),
    ("ai", "INTEGER[]", "ARRAY<INT>", [1, None, -3], [1, None, -3]),
    ("at", "TEXT[]", "ARRAY<STRING>", ["a", 'b "q"', "", None], ["a", 'b "q"', "", None]),
]
TYPE_TABLES = {"postgres": POSTGRES_TYPES, "mysql": MYSQL_TYPES}


def _same(value, expected) -> bool:
    if isinstance(expected, dt.datetime):  # the session reads TIMESTAMP and TIMESTAMP_LTZ as UTC wall-clock values
        return isinstance(value, dt.datetime) and value.replace(tzinfo=None) == expected
    if isinstance(expected, bytes):
        return value is not None and bytes(value) == expected
    if isinstance(expected, float):
        return value == pytest.approx(expected)
    return value == expected and type(value) is type(expected)


@pytest.mark.parametrize("server", DATABASES)
def test_type_round_trip(env, request, server):
    """Every type of Flink's table for the database: written through the sink, read back by SQL and through the
    scan source (Flink's mapped types in the DDL), equal; a row of NULLs stays NULL."""
    db = request.getfixturevalue(server)
    table = TYPE_TABLES[server]
    target = table_name("types")
    execute(db, f"CREATE TABLE {target} ({', '.join(f'{c} {t}' for c, t, *_ in table)})")
    from kindling.connectors.collection import _encode

    flink_columns = ", ".join(f"{c} {f}" for c, _, f, *_ in table)
    data = json.dumps([[_encode(w) for *_, w, _ in table], [None] * len(table)]).replace("'", "''")
    env.execute_sql(f"CREATE TABLE src ({flink_columns}) WITH ('connector' = 'collection', 'data' = '{data}')")
    env.execute_sql(f"CREATE TABLE sink_t ({flink_columns}) WITH ({with_options(db, target)})")
    assert run_job(lambda: env.execute_sql("INSERT INTO sink_t SELECT * FROM src"), db, target) == "FINISHED"
    stored = rows(db, f"SELECT s, t, m, l FROM {target} WHERE s IS NOT NULL")
    assert stored == [("héllo 'quoted'", "", Decimal("12345678.91"), 9007199254740993)]
    if server == "postgres":  # the TIMESTAMP_LTZ is the instant written, whatever the server's zone
        assert rows(db, f"SELECT tz FROM {target} WHERE tz IS NOT NULL") == [(WHEN.replace(tzinfo=dt.timezone.utc),)]
    back = sorted(collect(env, "SELECT * FROM sink_t"), key=lambda r: r["s"] is None)
    wrong = {c: (back[0][c], read) for c, _, _, _, read in table if not _same(back[0][c], read)}
    assert wrong == {}
    assert all(back[1][c] is None for c in back[1].asDict())


# Database types read through the scan source (rows inserted by the database itself), each with Flink's mapped type:
# the aliases and serial types of Flink's table, and MySQL's BIT(1) (Flink's MySQL catalog maps it to BOOLEAN).
READ_TYPES = {
    "postgres": [
        ("ss", "SMALLSERIAL", "SMALLINT", "7", 7),
        ("s2", "SERIAL2", "SMALLINT", "-8", -8),
        ("sr", "SERIAL", "INT", "2147483647", 2147483647),
        ("bs", "BIGSERIAL", "BIGINT", "9223372036854775807", 9223372036854775807),
        ("i4", "INT4", "INT", "-5", -5),
        ("i8", "INT8", "BIGINT", "6", 6),
        ("nu", "NUMERIC", "DECIMAL(38, 18)", "1.5", Decimal("1.5")),
        ("tm", "TIME", "TIME(6)", "'01:02:03.456789'", dt.time(1, 2, 3, 456000)),  # Flink's JDBC runtime reads milliseconds
        ("tn", "TIME", "TIME(6)", "'01:02:03.000456'", dt.time(1, 2, 3)),
        ("ab", "BIGINT[]", "ARRAY<BIGINT>", "'{1,2}'", [1, 2]),
    ],
    "mysql": [
        ("bt", "BIT(1)", "BOOLEAN", "b'0'", False),
        ("bt1", "BIT(1)", "BOOLEAN", "b'1'", True),
        ("mu", "MEDIUMINT UNSIGNED", "INT", "16777215", 16777215),
        ("it", "INTEGER", "INT", "-2147483648", -2147483648),
        ("du", "DECIMAL(5,2) UNSIGNED", "DECIMAL(6, 2)", "999.99", Decimal("999.99")),
        ("tt", "TINYTEXT", "STRING", "'tiny'", "tiny"),
        ("mt", "MEDIUMTEXT", "STRING", "'medium'", "medium"),
        ("lt", "LONGTEXT", "STRING", "'long'", "long"),
        ("js", "JSON", "STRING", "'{\"a\": 1}'", '{"a": 1}'),
        ("tb", "TINYBLOB", "BYTES", "x'00ff'", b"\x00\xff"),
        ("mb", "MEDIUMBLOB", "BYTES", "x'01'", b"\x01"),
        ("lb", "LONGBLOB", "BYTES", "x'02'", b"\x02"),
        ("ng", "TIME", "TIME(0)", "'-01:02:03'", "-01:02:03"),
    ],
}


@pytest.mark.parametrize("server", DATABASES)
def test_read_mapping_of_each_database_type(env, request, server):
    db = request.getfixturevalue(server)
    table = READ_TYPES[server]
    target = table_name("read")
    execute(db, f"CREATE TABLE {target} ({', '.join(f'{c} {t}' for c, t, *_ in table)})",
            f"INSERT INTO {target} ({', '.join(c for c, *_ in table)}) VALUES ({', '.join(v for *_, v, _ in table)})")
    env.execute_sql(f"CREATE TABLE dim ({', '.join(f'{c} {f}' for c, _, f, *_ in table)}) WITH ({with_options(db, target)})")
    (row,) = collect(env, "SELECT * FROM dim")
    wrong = {c: (row[c], read) for c, *_, read in table if not _same(row[c], read)}
    assert wrong == {}


# Database types Flink maps to no type, or to one the DDL's cannot hold: refused at start naming column and types.
REFUSED = {
    "postgres": [
        ("TIME WITH TIME ZONE", "STRING", "has no type for TIME WITH TIME ZONE", False),
        ("INTERVAL", "STRING", "has no type for INTERVAL", False),
        ("TIMESTAMP WITH TIME ZONE", "TIMESTAMP(6)", "maps to TIMESTAMP_LTZ\\(6\\) in Flink", False),
        ("TIMESTAMP", "TIMESTAMP_LTZ(6)", "maps to TIMESTAMP\\(6\\) in Flink", False),
        ("INTEGER[]", "ARRAY<BIGINT>", "maps to ARRAY<INT> in Flink", False),
        ("NUMERIC(10,2)", "DECIMAL(10, 1)", "maps to DECIMAL\\(10, 2\\) in Flink, which DECIMAL\\(10, 1\\) cannot read", False),
        ("NUMERIC(10,2)", "DECIMAL(12, 4)", "cannot hold without rounding", True),
        ("DOUBLE PRECISION", "FLOAT", "maps to DOUBLE in Flink", False),
        ("BIGINT", "INT", "maps to BIGINT in Flink, which INT cannot read", False),
        ("TEXT", "BYTES", "maps to STRING in Flink", False),
    ],
    "mysql": [
        ("YEAR", "INT", "has no type for YEAR", False),
        ("BIT(8)", "BYTES", "has no type for BIT\\(8\\)", False),
        ("BIGINT UNSIGNED", "BIGINT", "maps to DECIMAL\\(20, 0\\) in Flink, which BIGINT cannot read", False),
        ("INT UNSIGNED", "INT", "maps to BIGINT in Flink", False),
        ("TINYINT UNSIGNED", "TINYINT", "maps to SMALLINT in Flink", False),
        ("DECIMAL(10,2)", "INT", "maps to DECIMAL\\(10, 2\\) in Flink", False),
        ("DECIMAL(10,2)", "DOUBLE", "maps to DECIMAL\\(10, 2\\) in Flink", False),
        ("DATETIME", "DATE", "maps to TIMESTAMP\\(0\\) in Flink", False),
        ("VARCHAR(10)", "INT", "maps to STRING in Flink", False),
    ],
}
# Flink types the dialect refuses before looking at the database (AbstractDialect.validate's messages).
DIALECT_REFUSED = {
    "postgres": [("TIMESTAMP(7)", "The precision of field 'x' is out of the TIMESTAMP precision range [0, 6] supported by "
                  "PostgreSQL dialect."),
                 ("BINARY(5)", "The PostgreSQL dialect doesn't support type: BINARY(5)."),
                 ("VARBINARY(10)", "The PostgreSQL dialect doesn't support type: VARBINARY(10)."),
                 ("MAP<STRING, INT>", "The PostgreSQL dialect doesn't support type: MAP<STRING, INT>.")],
    "mysql": [("TIMESTAMP(9)", "The precision of field 'x' is out of the TIMESTAMP precision range [0, 6] supported by "
               "MySQL dialect."),
              ("BINARY(5)", "The MySQL dialect doesn't support type: BINARY(5)."),
              ("TIMESTAMP_LTZ(3)", "The MySQL dialect doesn't support type: TIMESTAMP_LTZ(3)."),
              ("ARRAY<INT>", "The MySQL dialect doesn't support type: ARRAY<INT>."),
              ("DECIMAL(66, 0)", "The precision of field 'x' is out of the DECIMAL precision range [1, 65] supported by "
               "MySQL dialect.")],
}


@pytest.mark.parametrize("server", DATABASES)
def test_types_flink_cannot_map_are_refused_naming_the_column_and_type(request, server):

    from pyspark.sql.types import StructType

    from kindling.connectors.base import TABLE_COLUMN_TYPES
    from kindling.connectors.jdbc.dialects import JdbcError
    from kindling.connectors.jdbc.options import jdbc_config
    from kindling.connectors.jdbc.sink import check_table
    from kindling.sql.types import parse_type

    db = request.getfixturevalue(server)
    for database_type, flink, message, writing in REFUSED[server]:
        target = table_name("refused")
        execute(db, f"CREATE TABLE {target} (x {database_type})")
        config = jdbc_config({**db.options(), "table-name": target, TABLE_COLUMN_TYPES: json.dumps({"x": flink})})
        schema = StructType([parse_type(flink).field("x")])
        with pytest.raises(JdbcError, match=f"column 'x' is {re.escape(flink)} in the DDL but .*{message}"):
            check_table(config, schema, writing=writing)
    target = table_name("dialect")
    execute(db, f"CREATE TABLE {target} (x BIGINT)")
    for flink, message in DIALECT_REFUSED[server]:
        config = jdbc_config({**db.options(), "table-name": target, TABLE_COLUMN_TYPES: json.dumps({"x": flink})})
        spark_type = "DECIMAL(38, 0)" if flink.startswith("DECIMAL") else flink  # kindling's parser stops at 38
        with pytest.raises(JdbcError, match=re.escape(message)):
            check_table(config, StructType([parse_type(spark_type).field("x")]))


def test_a_flink_type_the_dialect_refuses_fails_the_insert_with_flinks_message(env, mysql):
    from kindling.sql import SqlError

    target = table_name("precision")
    execute(mysql, f"CREATE TABLE {target} (id BIGINT, ts DATETIME(6), raw VARBINARY(10))")
    _collection(env, "src", [[1]], "id BIGINT")
    env.execute_sql(f"CREATE TABLE far (id BIGINT, ts TIMESTAMP(9)) WITH ({with_options(mysql, target)})")
    with pytest.raises(SqlError, match=re.escape("The precision of field 'ts' is out of the TIMESTAMP precision range "
                                                 "[0, 6] supported by MySQL dialect.")):
        env.execute_sql("INSERT INTO far SELECT id, CAST(NULL AS TIMESTAMP(9)) FROM src")
    env.execute_sql(f"CREATE TABLE fixed (id BIGINT, raw BINARY(5)) WITH ({with_options(mysql, target)})")
    with pytest.raises(SqlError, match=re.escape("The MySQL dialect doesn't support type: BINARY(5).")):
        env.execute_sql("INSERT INTO fixed SELECT id, CAST(NULL AS BINARY(5)) FROM src")


@pytest.mark.parametrize("server", DATABASES)
def test_a_declared_primary_key_needs_a_unique_key_over_exactly_its_columns(request, server):
    """Without one MySQL's ON DUPLICATE KEY UPDATE appends duplicates silently: the sink refuses at start."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from kindling.connectors.jdbc.dialects import JdbcError
    from kindling.connectors.jdbc.options import jdbc_config
    from kindling.connectors.jdbc.sink import check_table

    db = request.getfixturevalue(server)
    schema = StructType([StructField("a", LongType()), StructField("b", StringType()), StructField("v", LongType())])
    plain, other, partial, fitting = (table_name(p) for p in ("nokey", "other", "partial", "fits"))
    execute(db, f"CREATE TABLE {plain} (a BIGINT, b VARCHAR(10), v BIGINT)",
            f"CREATE TABLE {other} (a BIGINT PRIMARY KEY, b VARCHAR(10), v BIGINT)",
            f"CREATE TABLE {fitting} (a BIGINT NOT NULL, b VARCHAR(10) NOT NULL, v BIGINT)",
            f"CREATE UNIQUE INDEX {fitting}_ba ON {fitting} (b, a)")
    if server == "postgres":  # a partial unique index cannot serve ON CONFLICT (a, b)
        execute(db, f"CREATE TABLE {partial} (a BIGINT, b VARCHAR(10), v BIGINT)",
                f"CREATE UNIQUE INDEX {partial}_ab ON {partial} (a, b) WHERE v > 0")

    def config(target):
        return jdbc_config({**db.options(), "table-name": target, "kindling.table.primary-key": "a;b"})

    for target, have in [(plain, "none"), (other, "\\(a\\)")] + ([(partial, "none")] if server == "postgres" else []):
        with pytest.raises(JdbcError, match=f"PRIMARY KEY \\(a, b\\) makes the sink upsert, but table '{target}' at .* has no "
                                            f"primary key or unique index over exactly those columns \\(its unique keys: {have}\\)"):
            check_table(config(target), schema)
    check_table(config(fitting), schema)  # the unique index (b, a): the same columns
    check_table(config(plain), schema, writing=False)  # a scan needs no key


@pytest.mark.parametrize("server", DATABASES)
def test_a_commit_retry_reconnects_within_max_retry_timeout(request, server, monkeypatch):
    from kindling.connectors.jdbc import sink
    from kindling.connectors.jdbc.options import jdbc_config

    db = request.getfixturevalue(server)
    target = table_name("retry")
    execute(db, f"CREATE TABLE {target} (id BIGINT)")
    config = jdbc_config({**db.options(), "table-name": target, "sink.max-retries": "1", "connection.max-retry-timeout": "9 s"})
    dialect_class = type(sink.dialect_for(config))
    insert, connect = dialect_class.insert, dialect_class.connect
    failures, timeouts = [RuntimeError("the connection broke")], []

    def insert_failing_once(self, cursor, names, table):
        insert(self, cursor, names, table)
        if failures:
            raise failures.pop()

    def observed(self, autocommit=False, timeout=None):
        timeouts.append(timeout)
        return connect(self, autocommit, timeout)

    from pyspark.sql.types import LongType, StructField, StructType

    sink.check_table(config, StructType([StructField("id", LongType())]))  # as at start: the commits table exists
    monkeypatch.setattr(dialect_class, "insert", insert_failing_once)
    monkeypatch.setattr(dialect_class, "connect", observed)
    sink._drop_connection(sink.dialect_for(config))
    import pyarrow as pa

    assert sink.commit_batch(config, f"{target}@t", 0, pa.table({"id": pa.array([1, 2], pa.int64())}), ["id"]) is True
    assert timeouts == [None, 9]  # the first connection with the connect timeout, the retry's within 9 s
    assert rows(db, f"SELECT id FROM {target}") == [(1,), (2,)]


def test_a_postgres_batch_larger_than_a_staged_chunk_is_upserted_and_deleted_whole(postgres, monkeypatch):
    """PostgreSQL upserts and deletes stage STAGE_ROWS rows at a time in one transaction: every chunk lands."""
    import pyarrow as pa
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    from kindling.connectors.jdbc import dialects, sink
    from kindling.connectors.jdbc.options import jdbc_config

    monkeypatch.setattr(dialects, "STAGE_ROWS", 3)
    target = table_name("chunks")
    execute(postgres, f"CREATE TABLE {target} (id BIGINT PRIMARY KEY, name VARCHAR(10))")
    config = jdbc_config({**postgres.options(), "table-name": target, "kindling.table.primary-key": "id"})
    sink.check_table(config, StructType([StructField("id", LongType()), StructField("name", StringType())]))
    first = pa.table({"id": pa.array(range(10), pa.int64()), "name": [f"n{i}" for i in range(10)]})
    assert sink.commit_batch(config, f"{target}@t", 0, first, ["id", "name"]) is True
    changes = pa.table({"id": pa.array([0, 1, 2, 3, 4, 5, 6, 11], pa.int64()), "name": ["x"] * 8,
                        ROWKIND_COLUMN: ["-D", "-D", "-D", "-D", "-D", "+U", "+U", "+I"]})
    assert sink.commit_batch(config, f"{target}@t", 1, changes, ["id", "name"]) is True
    assert rows(postgres, f"SELECT id, name FROM {target}") == (
        [(5, "x"), (6, "x"), (7, "n7"), (8, "n8"), (9, "n9"), (11, "x")])
