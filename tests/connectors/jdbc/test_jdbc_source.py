"""The jdbc scan source against real servers: partitioned scans equal a full scan; bad input fails at start."""

from __future__ import annotations

import os
import sys

import pytest

from kindling.connectors.jdbc.dialects import JdbcError, dialect_for
from kindling.connectors.jdbc.options import jdbc_config
from kindling.connectors.jdbc.sink import check_table
from kindling.connectors.jdbc.source import JdbcStreamReader, ScanSplit

sys.path.insert(0, os.path.dirname(__file__))
from jdbc_helpers import collect, execute, table_name, with_options  # noqa: E402

pytestmark = pytest.mark.integration

ROWS = 500


@pytest.fixture
def filled(db):
    target = table_name("scan")
    execute(db, f"CREATE TABLE {target} (id BIGINT, name VARCHAR(20), score DOUBLE PRECISION)")
    connection = db.connect()
    cursor = connection.cursor()
    cursor.executemany(f"INSERT INTO {target} (id, name, score) VALUES (%s, %s, %s)",
                       [(i, f"name-{i}", i / 4) for i in range(ROWS)])
    connection.commit()
    connection.close()
    return target


def _reader(db, target, **extra):
    from pyspark.sql.types import BooleanType, DoubleType, LongType, StringType, StructField, StructType

    schema = StructType([StructField("id", LongType()), StructField("name", StringType()), StructField("score", DoubleType()),
                         StructField("__kindling_eos", BooleanType())])
    return JdbcStreamReader(schema, {"url": db.url, "username": db.user, "password": db.password, "table-name": target, **extra})


def _read_all(reader) -> tuple[list[tuple], int, int]:
    start = reader.initialOffset()
    parts = reader.partitions(start, reader.latestOffset(start, reader.getDefaultReadLimit()))
    rows, batches, eos = [], 0, 0
    for part in parts:
        for batch in reader.read(part):
            batches += 1
            for row in batch.to_pylist():
                if row["__kindling_eos"]:
                    eos += 1
                else:
                    rows.append((row["id"], row["name"], row["score"]))
    assert reader.partitions(reader.latestOffset(start, None), reader.latestOffset(start, None)) == []
    return sorted(rows), len(parts), eos


def test_partitioned_scan_equals_full_scan_in_streamed_batches(db, filled):
    full, parts, eos = _read_all(_reader(db, filled))
    assert parts == 1 and eos == 1 and len(full) == ROWS
    assert full[:2] == [(0, "name-0", 0.0), (1, "name-1", 0.25)]
    options = {"scan.partition.column": "id", "scan.partition.num": "4", "scan.partition.lower-bound": "0",
               "scan.partition.upper-bound": str(ROWS - 1), "scan.fetch-size": "64"}
    split, parts, eos = _read_all(_reader(db, filled, **options))
    assert parts == 4 and eos == 1
    assert split == full
    # the fetch size streams: one Arrow batch per round trip
    reader = _reader(db, filled, **options)
    batches = list(reader.read(ScanSplit(0, 0, 199, False)))
    assert [b.num_rows for b in batches] == [64, 64, 64, 8]
    # the bounds filter, as in Flink: rows outside them are never read
    narrow, _, _ = _read_all(_reader(db, filled, **{**options, "scan.partition.upper-bound": "99"}))
    assert narrow == full[:100]


def test_sql_scan_through_spark(env, db, filled):
    partitions = {"scan.partition.column": "id", "scan.partition.num": "3", "scan.partition.lower-bound": "0",
                  "scan.partition.upper-bound": str(ROWS - 1)}
    env.execute_sql(f"CREATE TABLE scanned (id BIGINT, name STRING, score DOUBLE) WITH ({with_options(db, filled, **partitions)})")
    rows = collect(env, "SELECT id, name FROM scanned WHERE id < 10")
    assert sorted((r["id"], r["name"]) for r in rows) == [(i, f"name-{i}") for i in range(10)]


def _config(db, target, **extra):
    return jdbc_config({"url": db.url, "username": db.user, "password": db.password, "table-name": target, **extra})


def _schema(*fields):
    from pyspark.sql.types import StructType

    return StructType.fromDDL(", ".join(fields))


def test_bad_input_fails_at_start_naming_the_option_or_column(db, filled):
    secret = db.password
    wrong = _config(db, filled, password="not-" + secret)
    with pytest.raises(JdbcError, match="'username' and 'password'") as error:
        check_table(wrong, _schema("id BIGINT"))
    assert secret not in str(error.value) and "not-" + secret not in str(error.value)
    unreachable = jdbc_config({"url": f"jdbc:{db.jdbc_scheme}://127.0.0.1:1/kindling", "username": db.user,
                               "password": secret, "table-name": filled})
    with pytest.raises(JdbcError, match="cannot connect to 127.0.0.1:1 named in option 'url'") as error:
        check_table(unreachable, _schema("id BIGINT"))
    assert secret not in str(error.value)
    with pytest.raises(JdbcError, match="does not exist \\(option 'table-name'\\)"):
        check_table(_config(db, "no_such_table"), _schema("id BIGINT"))
    with pytest.raises(JdbcError, match="column 'missing' of the DDL does not exist"):
        check_table(_config(db, filled), _schema("id BIGINT", "missing STRING"))
    with pytest.raises(JdbcError, match="column 'name' is INT in the DDL but (VARCHAR|CHARACTER VARYING)"):
        check_table(_config(db, filled), _schema("id BIGINT", "name INT"))
    with pytest.raises(JdbcError, match="column 'score' is DATE in the DDL"):
        check_table(_config(db, filled), _schema("score DATE"))
    with pytest.raises(JdbcError, match="dialect doesn't support type: MAP<STRING, STRING>"):
        check_table(_config(db, filled), _schema("id MAP<STRING, STRING>"))


def test_bad_password_through_sql_names_the_options_and_hides_the_password(env, db, filled):
    from kindling.sql import SqlError

    secret = "wrong-" + db.password
    env.execute_sql(f"CREATE TABLE bad (id BIGINT) WITH ({with_options(db, filled).replace(db.password, secret)})")
    env.execute_sql("CREATE TABLE one_row (id BIGINT) WITH ('connector' = 'collection', 'data' = '[[1]]')")
    with pytest.raises((SqlError, Exception)) as error:
        env.execute_sql("INSERT INTO bad SELECT id FROM one_row").wait(timeout=900)
    text = str(error.value)
    assert "'username' and 'password'" in text and secret not in text and db.password not in text


def test_dialect_quotes_as_flink(db):
    dialect = dialect_for(_config(db, "t"))
    assert dialect.quote("a") == ("`a`" if db.jdbc_scheme == "mysql" else "a")


def test_batch_reads_push_filters_into_the_scan_and_spark_keeps_its_answer(env, db):
    """Filters reach the database's WHERE (proved on PostgreSQL by a view column that fails on the row a pushed filter
    excludes), and Spark re-checks every row: MariaDB's case-insensitive '=' gives Spark's case-sensitive answer."""
    target = table_name("pushed")
    execute(db, f"CREATE TABLE {target} (id INT, name VARCHAR(20), amount DECIMAL(10, 2), day DATE, score DOUBLE PRECISION)")
    rows = [(i, "Alice" if i % 10 == 0 else "alice" if i % 10 == 1 else f"n{i}", f"{i}.25", f"2024-01-{1 + i % 28:02d}",
             None if i % 7 == 0 else i / 2) for i in range(1, 41)]
    connection = db.connect()
    cursor = connection.cursor()
    cursor.executemany(f"INSERT INTO {target} VALUES (%s, %s, %s, %s, %s)", rows)
    connection.commit()
    connection.close()
    guarded, guard = target, ""
    if db.url.startswith("jdbc:postgresql"):
        guarded, guard = table_name("guarded"), ", guard INT"  # reading row 13's guard fails: only a pushed-down 'id > 20' avoids it
        execute(db, f"CREATE VIEW {guarded} AS SELECT id, name, amount, day, score, 1 / (id - 13) AS guard FROM {target}")
    env.execute_sql("SET 'execution.runtime-mode' = 'batch'")
    env.execute_sql(f"CREATE TABLE pushed (id INT, name STRING, amount DECIMAL(10, 2), day DATE, score DOUBLE{guard}) "
                    f"WITH ({with_options(db, guarded)})")
    read = "id, name" + (", guard" if guard else "")  # the guard is read (only columns a query reads are selected)
    got = collect(env, f"SELECT {read} FROM pushed WHERE id > 20 AND name = 'alice' AND amount >= 21.25 "
                       "AND day IN (DATE '2024-01-04', DATE '2024-01-14', DATE '2024-01-15') AND NOT (id = 33) AND score IS NOT NULL")
    expected = [(i, n) for i, n, a, d, s in rows if i > 20 and n == "alice" and float(a) >= 21.25
                and d in ("2024-01-04", "2024-01-14", "2024-01-15") and i != 33 and s is not None]
    assert sorted((r["id"], r["name"]) for r in got) == expected == [(31, "alice")]
    # Conditions the database could answer differently from Spark stay with Spark alone, and still give Spark's rows.
    got = collect(env, "SELECT id FROM pushed WHERE id > 20 AND name > 'b' AND NOT (name = 'alice') AND score > 15.5")
    assert sorted(r["id"] for r in got) == [i for i, n, a, d, s in rows if i > 20 and n > "b" and n != "alice" and s is not None
                                            and s > 15.5]


def test_the_pushed_conditions_by_column_type():
    from pyspark.sql.datasource import EqualTo, GreaterThan, In, IsNull, LessThan, Not, StringStartsWith
    from pyspark.sql.types import StructType

    from kindling.connectors.jdbc.filters import encode_conditions, pushed_conditions, where_clause

    schema = StructType.fromDDL("id BIGINT, name STRING, price DOUBLE, amount DECIMAL(10,2), day DATE, ts TIMESTAMP")
    import datetime
    import decimal

    filters = [GreaterThan(("id",), 5), EqualTo(("name",), "a"), LessThan(("name",), "b"), Not(EqualTo(("name",), "a")),
               GreaterThan(("price",), 1.5), IsNull(("price",)), In(("amount",), (decimal.Decimal("1.50"), None)),
               Not(LessThan(("day",), datetime.date(2024, 1, 2))), GreaterThan(("ts",), datetime.datetime(2024, 1, 1)),
               StringStartsWith(("name",), "x"), EqualTo(("nested", "field"), 1)]
    conditions = pushed_conditions(schema, filters)
    sql, params = where_clause(lambda c: f'"{c}"', encode_conditions(conditions))
    assert sql == ['"id" > %s', '"name" = %s', '"price" IS NULL', '"amount" IN (%s)', 'NOT ("day" < %s)']
    assert params == [5, "a", decimal.Decimal("1.50"), datetime.date(2024, 1, 2)]


def test_filter_handling_policy_never_pushes_nothing(env, postgres):
    """With 'never' the scan has no WHERE: reading the guarded view fails on the row a pushed filter would skip."""
    from pyspark.sql.datasource import GreaterThan
    from pyspark.sql.types import IntegerType, StructField, StructType

    from kindling.connectors.jdbc import JdbcDataSource
    from kindling.connectors.jdbc.filters import PUSHED_FILTERS_OPTION

    schema = StructType([StructField("id", IntegerType())])
    options = {"url": postgres.url, "table-name": "t"}
    assert PUSHED_FILTERS_OPTION in JdbcDataSource.push_filters(options, schema, [GreaterThan(("id",), 20)])
    never = {**options, "filter.handling.policy": "never"}
    assert JdbcDataSource.push_filters(never, schema, [GreaterThan(("id",), 20)]) == never

    target, guarded = table_name("policy"), table_name("guarded")
    execute(postgres, f"CREATE TABLE {target} (id INT)", f"INSERT INTO {target} SELECT generate_series(1, 30)",
            f"CREATE VIEW {guarded} AS SELECT id, 1 / (id - 13) AS guard FROM {target}")
    env.execute_sql("SET 'execution.runtime-mode' = 'batch'")
    env.execute_sql(f"CREATE TABLE pushed (id INT, guard INT) WITH ({with_options(postgres, guarded)})")
    env.execute_sql(f"CREATE TABLE kept (id INT, guard INT) WITH ({with_options(postgres, guarded, **{'filter.handling.policy': 'never'})})")
    assert sorted(r["id"] for r in collect(env, "SELECT id, guard FROM pushed WHERE id > 20")) == list(range(21, 31))
    with pytest.raises(Exception, match="failed"):  # the database's division by zero, row 13 read
        collect(env, "SELECT id, guard FROM kept WHERE id > 20", attempts=1)


def test_only_the_columns_a_query_reads_are_selected_and_streaming_reads_filter_in_the_database(env, postgres):
    """The SQL planner declares each scan's columns and filters (kindling.sql.pushdown): a column no query reads is not
    selected (a view column failing on every row proves it), and a streaming read, to which Spark pushes no filter,
    still has the database skip the rows its conditions exclude (the guard fails on row 13 only)."""
    target, guarded = table_name("needs"), table_name("guarded")
    execute(postgres, f"CREATE TABLE {target} (id INT, name VARCHAR(10))",
            f"INSERT INTO {target} SELECT i, 'n' || i FROM generate_series(1, 30) AS i",
            f"CREATE VIEW {guarded} AS SELECT id, name, 1 / (id - 13) AS guard, 1 / (id - id) AS never FROM {target}")
    env.execute_sql(f"CREATE TABLE needs (id INT, name STRING, guard INT, never INT) WITH ({with_options(postgres, guarded)})")
    for mode in ("streaming", "batch"):
        env.execute_sql(f"SET 'execution.runtime-mode' = '{mode}'")
        rows = collect(env, "SELECT id, guard FROM needs WHERE id > 20 AND name <> 'n25'")
        assert sorted(r["id"] for r in rows) == [i for i in range(21, 31) if i != 25], mode
        assert sorted(r["n"] for r in collect(env, "SELECT COUNT(*) AS n FROM needs")) == [30], mode
    with pytest.raises(Exception, match="failed"):  # a query reading the failing column does select it
        collect(env, "SELECT id, never FROM needs", attempts=1)
