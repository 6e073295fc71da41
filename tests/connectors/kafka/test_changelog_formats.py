"""Flink's changelog formats on Kafka and files: a CDC topic is an updating table, and a query's changelog is written as
change envelopes (debezium-json, canal-json, maxwell-json).

A Debezium topic of creates, updates (of a value and of the grouping key) and deletes is aggregated by SQL: every delete
and every update's before-image retracts, so the aggregate equals the one of the rows as they stand after the last
change. The aggregate's own changelog is written as Debezium envelopes (an update as a delete of the old row and a create
of the new one, as Flink writes it), read back as a table, and kept in PostgreSQL through an upsert sink. The codecs
themselves are tested in tests/formats/test_changelog.py; Flink's answers to queries over such tables are in the
differential corpus (tests/sql/differential, the ``cdc-*`` entries).
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter

import pytest

from kindling.sql import SqlError

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), os.pardir, "jdbc"))
from jdbc_helpers import execute, rows, table_name, with_options  # noqa: E402
from kafka_helpers import produce, read_back  # noqa: E402

# (op, before, after) of rows (order_id, customer, amount), in the order the database changed them.
CHANGES = [
    ("c", None, (1, "alice", 10)),
    ("c", None, (2, "bob", 7)),
    ("c", None, (3, "alice", 3)),
    ("u", (1, "alice", 10), (1, "alice", 12)),
    ("d", (2, "bob", 7), None),
    ("u", (3, "alice", 3), (3, "bob", 3)),  # the grouping key changes: alice loses the row, bob gains it
    ("r", None, (4, "carol", 5)),
    ("c", None, (5, "dave", 1)),
    ("d", (5, "dave", 1), None),  # dave's only row: dave's group disappears
    ("c", None, (6, "alice", 4)),
]
COLUMNS = ("order_id", "customer", "amount")


def _envelope(op: str, before, after) -> bytes:
    row = lambda values: dict(zip(COLUMNS, values)) if values else None  # noqa: E731
    return json.dumps({"before": row(before), "after": row(after), "op": op}).encode()


def _final_rows() -> dict[int, tuple]:
    """The table as it stands after every change."""
    table: dict[int, tuple] = {}
    for _, before, after in CHANGES:
        if before is not None:
            del table[before[0]]
        if after is not None:
            table[after[0]] = after
    return table


def _expected_totals() -> dict[str, tuple[int, int]]:
    totals: dict[str, tuple[int, int]] = {}
    for _, customer, amount in _final_rows().values():
        n, total = totals.get(customer, (0, 0))
        totals[customer] = (n + 1, total + amount)
    return totals


def _applied(changes: list[tuple[str, tuple]]) -> Counter:
    """A changelog (row kind, row) applied to a multiset of rows."""
    final: Counter = Counter()
    for kind, row in changes:
        final[row] += -1 if kind in ("-U", "-D") else 1
    assert all(n >= 0 for n in final.values()), f"a retraction of a row never inserted: {final}"
    return +final


def _kafka_table(name: str, kafka, topic: str, columns: str, fmt: str = "debezium-json", per_batch: int = 0) -> str:
    scan = "'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'latest-offset', "
    if per_batch:  # the changes over several micro-batches: the aggregate changes after its first results
        scan += f"'scan.max-records-per-trigger' = '{per_batch}', "
    return (f"CREATE TABLE {name} ({columns}) WITH ('connector' = 'kafka', 'topic' = '{topic}', "
            f"'properties.bootstrap.servers' = '{kafka.bootstrap_servers}', {scan}'format' = '{fmt}')")


@pytest.mark.integration
def test_a_debezium_topic_aggregated_into_debezium_kafka_and_postgres_equals_the_final_rows(env, kafka, postgres, topic):
    # Debezium keys a table's topic by primary key: each row's changes stay in order in one partition.
    produce(kafka.bootstrap_servers, topic, [((after or before)[0] % 4, _envelope(op, before, after)) for op, before, after in CHANGES])
    out_topic = f"{topic}-totals"
    kafka.create_topic(out_topic, partitions=1)
    target = table_name("totals")
    execute(postgres, f"CREATE TABLE {target} (customer VARCHAR(20) PRIMARY KEY, n BIGINT, total BIGINT)")

    env.execute_sql(_kafka_table("orders", kafka, topic, "order_id INT, customer STRING, amount INT", per_batch=2))
    env.execute_sql(_kafka_table("totals_topic", kafka, out_topic, "customer STRING, n BIGINT, total BIGINT"))
    env.execute_sql(f"CREATE TABLE totals_db (customer STRING, n BIGINT, total BIGINT, PRIMARY KEY (customer) NOT ENFORCED) "
                    f"WITH ({with_options(postgres, target)})")
    query = "SELECT customer, COUNT(*) AS n, SUM(amount) AS total FROM orders GROUP BY customer"
    result = env.execute_sql(f"EXECUTE STATEMENT SET BEGIN INSERT INTO totals_topic {query}; INSERT INTO totals_db {query}; END")
    assert result.wait(timeout=600) == "FINISHED"

    expected = _expected_totals()
    assert expected == {"alice": (2, 16), "bob": (1, 3), "carol": (1, 5)}
    assert {c: (n, t) for c, n, t in rows(postgres, f"SELECT customer, n, total FROM {target}")} == expected

    # The topic holds the aggregate's retract changelog as Debezium envelopes: an update is a delete and a create.
    envelopes = [json.loads(m.value()) for m in read_back(kafka.bootstrap_servers, out_topic, expected=1)]
    assert {e["op"] for e in envelopes} == {"c", "d"}
    changes = [("-D" if e["op"] == "d" else "+I", tuple(sorted((e["before"] or e["after"]).items()))) for e in envelopes]
    final = _applied(changes)
    assert {dict(r)["customer"]: (dict(r)["n"], dict(r)["total"]) for r in final} == expected

    # ... and read back as a table it is an updating table again, with the same final rows.
    collected = env.execute_sql("SELECT customer, n, total FROM totals_topic").final_rows(timeout=300)
    assert {r[0]: (r[1], r[2]) for r in collected} == expected


@pytest.mark.integration
def test_canal_and_maxwell_files_to_a_debezium_file_and_a_plain_sink_refused(env, tmp_path):
    updates = [("c", None, (1, "alice", 10)), ("c", None, (2, "bob", 7)), ("u", (1, "alice", 10), (1, "alice", 12)),
               ("d", (2, "bob", 7), None), ("c", None, (3, "bob", 1))]
    canal, maxwell = tmp_path / "canal", tmp_path / "maxwell"
    canal.mkdir()
    maxwell.mkdir()
    kinds = {"c": "insert", "u": "update", "d": "delete"}
    canal_lines, maxwell_lines = [], []
    for op, before, after in updates:
        row = dict(zip(COLUMNS, after or before))
        old = {k: v for k, v in zip(COLUMNS, before)} if op == "u" else None
        changed = {k: v for k, v in (old or {}).items() if row[k] != v}
        canal_lines.append({"data": [row], "type": kinds[op].upper(), **({"old": [changed]} if old else {})})
        maxwell_lines.append({"data": row, "type": kinds[op], **({"old": changed} if old else {})})
    (canal / "changes.json").write_text("".join(json.dumps(m) + "\n" for m in canal_lines))
    (maxwell / "changes.json").write_text("".join(json.dumps(m) + "\n" for m in maxwell_lines))
    columns = "order_id INT, customer STRING, amount INT"
    env.execute_sql(f"CREATE TABLE canal_orders ({columns}) WITH ('connector' = 'filesystem', 'path' = '{canal}', 'format' = 'canal-json')")
    env.execute_sql(f"CREATE TABLE maxwell_orders ({columns}) WITH ('connector' = 'filesystem', 'path' = '{maxwell}', "
                    "'format' = 'maxwell-json')")
    out = tmp_path / "out"
    env.execute_sql(f"CREATE TABLE totals (customer STRING, total INT) WITH ('connector' = 'filesystem', 'path' = '{out}', "
                    "'format' = 'debezium-json')")
    env.execute_sql(f"CREATE TABLE plain (customer STRING, total INT) WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'plain'}', "
                    "'format' = 'json')")

    for source in ("canal_orders", "maxwell_orders"):
        assert sorted(tuple(r) for r in env.execute_sql(f"SELECT * FROM {source}").final_rows(timeout=300)) == [(1, "alice", 12), (3, "bob", 1)]

    assert env.execute_sql("INSERT INTO totals SELECT customer, SUM(amount) FROM canal_orders GROUP BY customer").wait(timeout=300) \
        == "FINISHED"
    written = [json.loads(line) for f in sorted(out.rglob("*.json")) for line in f.read_text().splitlines()]
    assert written and {e["op"] for e in written} <= {"c", "d"}
    changes = [("-D" if e["op"] == "d" else "+I", ((e["before"] or e["after"])["customer"], (e["before"] or e["after"])["total"]))
               for e in written]
    assert _applied(changes) == Counter({("alice", 12): 1, ("bob", 1): 1})

    # A file of plain JSON rows cannot hold a delete: the updating query is refused naming the table, as Flink does.
    with pytest.raises(SqlError, match="table sink 'plain' .* doesn't support consuming update changes"):
        env.execute_sql("INSERT INTO plain SELECT customer, SUM(amount) FROM maxwell_orders GROUP BY customer")
    # A join over the two changelogs retracts what a deleted or updated row joined, as Flink's join does.
    joined = env.execute_sql("SELECT a.order_id, b.amount FROM canal_orders a JOIN maxwell_orders b ON a.order_id = b.order_id")
    assert sorted(tuple(r) for r in joined.final_rows(timeout=300)) == [(1, 12), (3, 1)]
    # A UNION ALL passes both changelogs on, each row with its kind: the deleted and the replaced rows leave again.
    united = env.execute_sql("SELECT order_id FROM canal_orders UNION ALL SELECT order_id FROM maxwell_orders")
    assert sorted(tuple(r) for r in united.final_rows(timeout=300)) == [(1,), (1,), (3,), (3,)]
    with pytest.raises(SqlError) as refused:
        env.execute_sql("SELECT order_id, amount FROM canal_orders UNION ALL SELECT order_id FROM maxwell_orders")
    assert refused.value.construct == "UNION ALL" and "different numbers of columns (1, 2)" in str(refused.value)
