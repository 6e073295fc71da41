"""The jdbc sink against real PostgreSQL and MariaDB: append, upsert, delete, a GROUP BY changelog, types."""

from __future__ import annotations

import datetime as dt
import json
import os
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


TYPES = {
    "postgres": ("b BOOLEAN, i SMALLINT, n INTEGER, l BIGINT, f REAL, d DOUBLE PRECISION, m NUMERIC(10,2), s VARCHAR(30), "
                 "t TEXT, y BYTEA, dt DATE, ts TIMESTAMP(6), tz TIMESTAMP WITH TIME ZONE"),
    "mysql": ("b BOOLEAN, i SMALLINT, n INT, l BIGINT, f FLOAT, d DOUBLE, m DECIMAL(10,2), s VARCHAR(30), t TEXT, "
              "y VARBINARY(20), dt DATE, ts DATETIME(6), tz TIMESTAMP(6) NULL"),
}
FLINK_TYPES = ("b BOOLEAN, i SMALLINT, n INT, l BIGINT, f FLOAT, d DOUBLE, m DECIMAL(10, 2), s STRING, t STRING, "
               "y BYTES, dt DATE, ts TIMESTAMP(6), tz TIMESTAMP_LTZ(6)")


@pytest.mark.parametrize("server", DATABASES)
def test_type_round_trip(env, request, server):
    """Values written through the sink and read back through the scan source are equal."""
    db = request.getfixturevalue(server)
    target = table_name("types")
    execute(db, f"CREATE TABLE {target} ({TYPES[server]})")
    from kindling.connectors.collection import _encode

    when = dt.datetime(2024, 2, 29, 13, 45, 30, 125000)
    row = [True, -7, 123456, 9007199254740993, 1.5, 2.25, Decimal("12345678.91"), "héllo 'quoted'", "", bytes([0, 1, 2, 255]),
           dt.date(2024, 2, 29), when, when.replace(tzinfo=dt.timezone.utc)]
    data = json.dumps([[_encode(v) for v in row], [None] * 13]).replace("'", "''")
    env.execute_sql(f"CREATE TABLE src ({FLINK_TYPES}) WITH ('connector' = 'collection', 'data' = '{data}')")
    env.execute_sql(f"CREATE TABLE sink_t ({FLINK_TYPES}) WITH ({with_options(db, target)})")
    assert run_job(lambda: env.execute_sql("INSERT INTO sink_t SELECT * FROM src"), db, target) == "FINISHED"
    stored = rows(db, f"SELECT s, t, m, l FROM {target} WHERE s IS NOT NULL")
    assert stored == [("héllo 'quoted'", "", Decimal("12345678.91"), 9007199254740993)]
    back = sorted(collect(env, "SELECT * FROM sink_t"), key=lambda r: r["s"] is None)
    first = back[0]
    assert (first["b"], first["i"], first["n"], first["l"], first["f"], first["d"]) == (True, -7, 123456, 9007199254740993, 1.5, 2.25)
    assert first["m"] == Decimal("12345678.91") and first["s"] == "héllo 'quoted'" and first["t"] == ""
    assert bytes(first["y"]) == bytes([0, 1, 2, 255]) and first["dt"] == dt.date(2024, 2, 29)
    assert first["ts"].replace(tzinfo=None) == when or first["ts"] == when
    assert all(back[1][c] is None for c in back[1].asDict())
