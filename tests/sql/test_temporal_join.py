"""Event-time temporal joins (JOIN versioned FOR SYSTEM_TIME AS OF o.rowtime): the version of each order's time, an
append-only result, and Flink's refusals. Flink's answers over the differential tables (inserts and a Debezium
changelog as versioned tables) are compared in tests/sql/differential (join-temporal-*)."""

from __future__ import annotations

import json

import pytest

from kindling.sql import SqlError

pytestmark = pytest.mark.integration

# Orders and EUR rates, one row per micro-batch: the rate changes at 5 s and 8 s (and a 4 s rate arrives after the 8 s
# one, out of order); USD has no rate; order 6 (4.5 s) arrives after order 3 (6 s), within the watermark's 2 s.
ORDERS = [(1, "EUR", 3000), (2, "USD", 4000), (3, "EUR", 6000), (6, "EUR", 4500), (4, "EUR", 9000), (5, None, 9500)]
RATES = [("EUR", 100, 1000), ("EUR", 110, 5000), ("EUR", 120, 8000), ("EUR", 105, 4000)]


def _collection(name: str, columns: str, rows: list, key: str = "") -> str:
    return (f"CREATE TABLE {name} ({columns}, ts AS TO_TIMESTAMP_LTZ(ms, 3), WATERMARK FOR ts AS ts - INTERVAL '2' SECOND"
            f"{f', PRIMARY KEY ({key}) NOT ENFORCED' if key else ''}) WITH "
            f"('connector' = 'collection', 'rows-per-batch' = '1', 'data' = '{json.dumps([list(r) for r in rows])}')")


@pytest.fixture
def rates_env(env):
    env.execute_sql(_collection("orders", "id INT, currency STRING, ms BIGINT", ORDERS))
    env.execute_sql(_collection("rates", "currency STRING, rate INT, ms BIGINT", RATES, key="currency"))
    return env


def test_each_order_joins_the_version_of_its_time_and_the_result_is_append_only(rates_env):
    # Flink's versioned view: the last rate per currency by event time; the 4 s rate, older than the 8 s one already
    # there, is no version of it (the deduplication never emits it)
    rates_env.execute_sql("CREATE VIEW latest_rates AS SELECT currency, rate, ts FROM (SELECT *, ROW_NUMBER() OVER "
                          "(PARTITION BY currency ORDER BY ts DESC) AS rn FROM rates) WHERE rn = 1")
    # both jobs run at once
    table = rates_env.execute_sql("SELECT o.id, o.currency, r.rate FROM orders AS o LEFT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r "
                                  "ON o.currency = r.currency")
    view = rates_env.execute_sql("SELECT o.id, r.rate FROM orders o JOIN latest_rates FOR SYSTEM_TIME AS OF o.ts AS r "
                                 "ON o.currency = r.currency")
    changes = table.collect_changelog(timeout=120)
    assert {kind for kind, _ in changes} == {"+I"}  # no retraction: a row leaves once the watermark passed its time
    # order 3 (6 s) takes the 5 s rate although the 8 s one had arrived; order 6 (4.5 s, out of order) the 4 s one that
    # came last; USD and a NULL currency have none (LEFT: padded)
    assert sorted((tuple(row) for _, row in changes), key=repr) == sorted(
        [(1, "EUR", 100), (2, "USD", None), (3, "EUR", 110), (6, "EUR", 105), (4, "EUR", 120), (5, None, None)], key=repr)
    # through the view, order 6 takes the 1 s rate: the 4 s one is no version
    assert sorted(view.collect_changelog(timeout=120)) == [("+I", (1, 100)), ("+I", (3, 110)), ("+I", (4, 120)), ("+I", (6, 100))]


def test_a_temporal_join_flink_rejects_is_refused_with_flinks_reason(rates_env):
    rates_env.execute_sql(_collection("plain_rates", "currency STRING, rate INT, ms BIGINT", RATES))
    refusals = {
        "SELECT o.id FROM orders o JOIN plain_rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.currency = r.currency":
            "Temporal Table Join requires primary key in versioned table",
        "SELECT o.id FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.id = r.rate":
            "Temporal table's primary key [currency] must be included in the equivalence condition of temporal join",
        "SELECT o.id FROM orders o RIGHT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.currency = r.currency":
            "an event-time temporal join is an inner or LEFT join",
    }
    for query, reason in refusals.items():
        with pytest.raises(SqlError, match=reason.replace("[", r"\[").replace("]", r"\]")) as refused:
            rates_env.execute_sql(query)
        assert refused.value.construct == "event-time temporal join"
    rates_env.execute_sql("SET 'table.exec.state.ttl' = '1 h'")
    with pytest.raises(SqlError, match="'table.exec.state.ttl' set is not supported"):
        rates_env.execute_sql("SELECT o.id FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.currency = r.currency")
