"""A CDC topic (debezium-json) read in SQL is an updating table; an updating query writes canal-json envelopes."""

from __future__ import annotations

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from kafka_helpers import produce, read_back  # noqa: E402

# A product table's changes as Debezium publishes them, all of one key in one partition (Kafka keeps their order).
CHANGES = [
    (0, {"before": None, "after": {"id": 1, "category": "bike", "price": 100}, "op": "r"}),
    (1, {"before": None, "after": {"id": 2, "category": "bike", "price": 50}, "op": "c"}),
    (2, {"before": None, "after": {"id": 3, "category": "car", "price": 900}, "op": "c"}),
    (0, {"before": {"id": 1, "category": "bike", "price": 100}, "after": {"id": 1, "category": "car", "price": 120}, "op": "u"}),
    (1, {"before": {"id": 2, "category": "bike", "price": 50}, "after": None, "op": "d"}),
    (1, None),  # Debezium's tombstone after a delete: skipped
    (3, {"before": None, "after": {"id": 4, "category": "boat", "price": 30}, "op": "c"}),
]


def _table(name: str, topic: str, servers: str, fmt: str, bounded: bool) -> str:
    bound = ", 'scan.bounded.mode' = 'latest-offset'" if bounded else ""
    return (f"CREATE TABLE {name} (id BIGINT, category STRING, price BIGINT) WITH ('connector' = 'kafka', "
            f"'topic' = '{topic}', 'properties.bootstrap.servers' = '{servers}', 'scan.startup.mode' = 'earliest-offset', "
            f"'format' = '{fmt}'{bound})")


@pytest.mark.integration
def test_debezium_topic_is_an_updating_table(env, kafka, topic):
    produce(kafka.bootstrap_servers, topic,
            [(p, None if change is None else json.dumps(change).encode()) for p, change in CHANGES])
    env.execute_sql(_table("products", topic, kafka.bootstrap_servers, "debezium-json", bounded=True))

    changelog = env.execute_sql("SELECT id, category, price FROM products").collect_changelog(timeout=300)
    by_key: dict[int, list] = {}
    for kind, row in changelog:
        by_key.setdefault(row["id"], []).append((kind, row["category"], row["price"]))
    assert by_key == {
        1: [("+I", "bike", 100), ("-U", "bike", 100), ("+U", "car", 120)],
        2: [("+I", "bike", 50), ("-D", "bike", 50)],
        3: [("+I", "car", 900)],
        4: [("+I", "boat", 30)],
    }

    # An aggregation over the CDC table retracts the old rows, as in Flink: product 1 moved from bike to car,
    # product 2 was deleted, so 'bike' has no rows left and disappears.
    totals = env.execute_sql("SELECT category, COUNT(*) AS n, SUM(price) AS total FROM products GROUP BY category")
    assert sorted((r["category"], r["n"], r["total"]) for r in totals.collect(timeout=300)) == [
        ("boat", 1, 30), ("car", 2, 1020)]


@pytest.mark.integration
def test_updating_query_writes_canal_json_and_append_only_formats_refuse_it(env, kafka, topic):
    produce(kafka.bootstrap_servers, topic,
            [(p, None if change is None else json.dumps(change).encode()) for p, change in CHANGES])
    out = topic + "-canal"
    kafka.create_topic(out, partitions=1)
    try:
        env.execute_sql(_table("products", topic, kafka.bootstrap_servers, "debezium-json", bounded=True))
        env.execute_sql(f"CREATE TABLE by_category (category STRING, total BIGINT) WITH ('connector' = 'kafka', "
                        f"'topic' = '{out}', 'properties.bootstrap.servers' = '{kafka.bootstrap_servers}', 'format' = 'canal-json')")
        env.execute_sql(f"CREATE TABLE plain (category STRING, total BIGINT) WITH ('connector' = 'kafka', "
                        f"'topic' = '{out}', 'properties.bootstrap.servers' = '{kafka.bootstrap_servers}', 'format' = 'json')")
        query = "SELECT category, SUM(price) FROM products GROUP BY category"
        with pytest.raises(Exception, match="doesn't support consuming update changes"):
            env.execute_sql(f"INSERT INTO plain {query}")
        assert env.execute_sql(f"INSERT INTO by_category {query}").wait(timeout=300) == "FINISHED"

        # Replaying the envelopes (an INSERT adds, a DELETE removes that row) gives the query's final result.
        current: dict[str, int] = {}
        for message in read_back(kafka.bootstrap_servers, out, expected=1, timeout=60):
            envelope = json.loads(message.value())
            assert set(envelope) == {"data", "type"} and envelope["type"] in ("INSERT", "DELETE")
            for row in envelope["data"]:
                if envelope["type"] == "INSERT":
                    current[row["category"]] = row["total"]
                elif current.get(row["category"]) == row["total"]:
                    del current[row["category"]]
        assert current == {"boat": 30, "car": 1020}
    finally:
        kafka.delete_topic(out)
