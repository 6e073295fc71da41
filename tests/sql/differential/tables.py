"""The differential suite's input: small deterministic tables as JSON files, and their Flink DDL.

The rows cover what a streaming engine gets wrong first: out-of-order event times within the
watermark's 5 s bound, duplicate keys (order 4 twice), NULLs in every nullable column, ties in
event time (orders 10 and 11) and in values (amounts 10 and 7 repeat).
"""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"

ORDERS = [
    # order_id, customer, item, amount, price, tag, ts
    (1, "alice", "apple", 10, 1.5, "o_101", "2024-01-01 08:00:01.000"),
    (2, "bob", "banana", 7, 0.25, "o_7", "2024-01-01 08:00:03.500"),
    (3, "alice", "cherry", 3, 4.0, "x_3", "2024-01-01 08:00:02.000"),  # 1.5 s late
    (4, "carol", "apple", 10, 1.5, "o_44", "2024-01-01 08:00:04.910"),
    (5, None, "banana", None, 0.75, None, "2024-01-01 08:00:06.000"),
    (6, "bob", "apple", 15, 1.5, "o_6", "2024-01-01 08:00:09.000"),
    (7, "alice", "banana", 7, 0.25, "o_70", "2024-01-01 08:00:07.250"),  # 1.75 s late
    (8, "dave", "durian", 20, 9.99, "Hello World", "2024-01-01 08:00:12.000"),
    (9, "carol", "cherry", 3, 4.0, "o_9", "2024-01-01 08:00:11.000"),  # 1 s late
    (10, "bob", None, 8, None, "o_10", "2024-01-01 08:00:15.000"),
    (11, "alice", "apple", 10, 1.5, "o_11", "2024-01-01 08:00:15.000"),  # same time as 10
    (4, "carol", "apple", 12, 1.5, "o_44", "2024-01-01 08:00:19.000"),  # order 4 again (duplicate key)
    (12, "erin", "elder", -4, 2.5, "  pad  ", "2024-01-01 08:00:21.123"),
]

CUSTOMERS = [
    # customer, city, level, since
    ("alice", "Berlin", 1, "2024-01-01 07:00:00.000"),
    ("bob", "Paris", 2, "2024-01-01 07:00:01.000"),
    ("carol", "Berlin", None, "2024-01-01 07:00:02.000"),
    ("frank", "Rome", 3, "2024-01-01 07:00:03.000"),
]

PRICES = [
    # item, unit_price, valid_from: a versioned table (primary key item, event time valid_from) for temporal joins;
    # apple and banana change price among the orders, cherry's first price comes after order 3, durian's at order 8's
    # very time, elder has none
    ("apple", 100, "2024-01-01 07:59:00.000"),
    ("banana", 50, "2024-01-01 08:00:00.000"),
    ("apple", 110, "2024-01-01 08:00:05.000"),
    ("banana", 55, "2024-01-01 08:00:08.000"),
    ("cherry", 30, "2024-01-01 08:00:10.000"),
    ("durian", 90, "2024-01-01 08:00:12.000"),
    ("apple", 120, "2024-01-01 08:00:14.000"),
]

# The same prices as a Debezium changelog (a versioned table from a CDC source): updates carry the new version's time,
# cherry is deleted at its first version's time (the delete's before image), durian comes later.
PRICE_CHANGES = [
    ("c", None, ("apple", 100, "2024-01-01 07:59:00.000")),
    ("c", None, ("banana", 50, "2024-01-01 08:00:00.000")),
    ("u", ("apple", 100, "2024-01-01 07:59:00.000"), ("apple", 110, "2024-01-01 08:00:05.000")),
    ("u", ("banana", 50, "2024-01-01 08:00:00.000"), ("banana", 55, "2024-01-01 08:00:08.000")),
    ("c", None, ("cherry", 30, "2024-01-01 08:00:10.000")),
    ("d", ("cherry", 30, "2024-01-01 08:00:10.000"), None),
    ("c", None, ("durian", 90, "2024-01-01 08:00:12.000")),
    ("u", ("apple", 110, "2024-01-01 08:00:05.000"), ("apple", 120, "2024-01-01 08:00:14.000")),
]

SHIPMENTS = [
    # ship_id, order_id, ship_ts
    (100, 1, "2024-01-01 08:00:05.000"),
    (101, 2, "2024-01-01 08:00:20.000"),
    (102, 4, "2024-01-01 08:00:06.000"),
    (103, 6, "2024-01-01 08:00:09.500"),
    (104, 99, "2024-01-01 08:00:10.000"),
    (105, 8, "2024-01-01 08:00:30.000"),
]

TICKER = [
    # symbol, price, tax, rowtime: stock prices for MATCH_RECOGNIZE, after the examples of Flink's pattern recognition
    # page. ACME's 10:00:05 row comes after its 10:00:06 row (late within the watermark); QQQ has a NULL price; one row
    # has no symbol; DROP's rows are 2 s apart (the page's time-constraint example, its hours scaled to seconds).
    ("ACME", 12, 1, "2024-01-01 10:00:00.000"),
    ("ACME", 17, 2, "2024-01-01 10:00:01.000"),
    ("XYZ", 7, 1, "2024-01-01 10:00:01.000"),
    ("ACME", 19, 1, "2024-01-01 10:00:02.000"),
    ("XYZ", 9, 2, "2024-01-01 10:00:02.000"),
    ("ACME", 21, 3, "2024-01-01 10:00:03.000"),
    ("XYZ", 10, 1, "2024-01-01 10:00:03.000"),
    ("ACME", 25, 2, "2024-01-01 10:00:04.000"),
    ("XYZ", 5, 2, "2024-01-01 10:00:04.000"),
    ("ACME", 15, 1, "2024-01-01 10:00:06.000"),
    ("XYZ", 10, 2, "2024-01-01 10:00:05.000"),
    ("ACME", 18, 1, "2024-01-01 10:00:05.000"),
    ("XYZ", 7, 2, "2024-01-01 10:00:06.000"),
    ("ACME", 14, 2, "2024-01-01 10:00:07.000"),
    ("XYZ", 14, 2, "2024-01-01 10:00:07.000"),
    ("ACME", 24, 2, "2024-01-01 10:00:08.000"),
    ("QQQ", 3, 1, "2024-01-01 10:00:08.000"),
    ("ACME", 25, 2, "2024-01-01 10:00:09.000"),
    ("QQQ", None, 1, "2024-01-01 10:00:09.000"),
    ("ACME", 19, 1, "2024-01-01 10:00:10.000"),
    ("QQQ", 4, 2, "2024-01-01 10:00:10.000"),
    ("QQQ", 6, 1, "2024-01-01 10:00:11.000"),
    ("QQQ", 5, 1, "2024-01-01 10:00:12.000"),
    (None, 8, 1, "2024-01-01 10:00:12.000"),
    ("QQQ", 9, 3, "2024-01-01 10:00:13.000"),
    ("DROP", 20, 1, "2024-01-01 10:00:20.000"),
    ("DROP", 17, 2, "2024-01-01 10:00:22.000"),
    ("DROP", 18, 1, "2024-01-01 10:00:24.000"),
    ("DROP", 11, 3, "2024-01-01 10:00:26.000"),
    ("DROP", 14, 2, "2024-01-01 10:00:28.000"),
    ("DROP", 9, 1, "2024-01-01 10:00:30.000"),
    ("DROP", 15, 1, "2024-01-01 10:00:32.000"),
    ("DROP", 14, 2, "2024-01-01 10:00:34.000"),
    ("DROP", 24, 2, "2024-01-01 10:00:36.000"),
    ("DROP", 1, 2, "2024-01-01 10:00:38.000"),
    ("DROP", 19, 1, "2024-01-01 10:00:40.000"),
]

# Changes to an order table as a CDC tool publishes them (order_id, customer, item, amount), in order: creates,
# snapshot reads ('r'), updates of a value, of a grouping key and from and to NULL, deletes (one of a row updated before).
CHANGES = [
    ("c", None, (1, "alice", "apple", 10)),
    ("c", None, (2, "bob", "banana", 7)),
    ("c", None, (3, "alice", "cherry", 3)),
    ("u", (1, "alice", "apple", 10), (1, "alice", "apple", 12)),
    ("c", None, (4, "carol", "apple", None)),
    ("d", (2, "bob", "banana", 7), None),
    ("u", (3, "alice", "cherry", 3), (3, "bob", "cherry", 3)),
    ("c", None, (5, None, "durian", 20)),
    ("u", (4, "carol", "apple", None), (4, "carol", "apple", 5)),
    ("d", (5, None, "durian", 20), None),
    ("c", None, (6, "dave", "apple", 10)),
    ("r", None, (7, "erin", "elder", -4)),
    ("u", (6, "dave", "apple", 10), (6, "dave", "banana", 10)),
    ("d", (1, "alice", "apple", 12), None),
    ("c", None, (8, "alice", "banana", 7)),
]
CHANGE_COLUMNS = ("order_id", "customer", "item", "amount")


def _change_envelopes(fmt: str) -> list[dict]:
    """CHANGES as the messages of one CDC format (Debezium, Canal or Maxwell) would carry them."""
    out = []
    for op, before, after in CHANGES:
        old = dict(zip(CHANGE_COLUMNS, before)) if before else None
        new = dict(zip(CHANGE_COLUMNS, after)) if after else None
        if fmt == "debezium-json":
            out.append({"before": old, "after": new, "op": op})
            continue
        kind = {"c": "insert", "r": "insert", "u": "update", "d": "delete"}[op]
        changed = {k: v for k, v in (old or {}).items() if new is not None and new[k] != v}
        if fmt == "canal-json":
            message = {"data": [new or old], "type": kind.upper(), "database": "shop", "table": "orders"}
            if kind == "update":
                message["old"] = [changed]
        else:  # maxwell-json
            message = {"data": new or old, "type": kind, "database": "shop", "table": "orders"}
            if kind == "update":
                message["old"] = changed
        out.append(message)
    return out


CHANGELOG_TABLES = {"order_changes": "debezium-json", "order_changes_canal": "canal-json", "order_changes_maxwell": "maxwell-json"}


def write_data() -> None:
    """(Re)write the JSON files from the rows above."""
    tables = {
        "orders": (("order_id", "customer", "item", "amount", "price", "tag", "ts"), ORDERS),
        "customers": (("customer", "city", "level", "since"), CUSTOMERS),
        "shipments": (("ship_id", "order_id", "ship_ts"), SHIPMENTS),
        "prices": (("item", "unit_price", "valid_from"), PRICES),
        "ticker": (("symbol", "price", "tax", "rowtime"), TICKER),
    }
    for name, (columns, rows) in tables.items():
        path = DATA / name / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(dict(zip(columns, row))) + "\n" for row in rows))
    for name, fmt in CHANGELOG_TABLES.items():
        path = DATA / name / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(message) + "\n" for message in _change_envelopes(fmt)))
    path = DATA / "price_changes" / "price_changes.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    columns = ("item", "unit_price", "valid_from")
    path.write_text("".join(json.dumps({"before": dict(zip(columns, before)) if before else None,
                                        "after": dict(zip(columns, after)) if after else None, "op": op}) + "\n"
                            for op, before, after in PRICE_CHANGES))


def ddl() -> list[str]:
    """CREATE TABLE statements for the three bounded JSON sources, with watermarks 5 s behind, and the order changes
    in each changelog format (updating tables)."""
    return [
        *[f"""CREATE TABLE {name} (order_id INT, customer STRING, item STRING, amount INT)
WITH ('connector' = 'filesystem', 'path' = '{DATA / name}', 'format' = '{fmt}')""" for name, fmt in CHANGELOG_TABLES.items()],
        f"""CREATE TABLE orders (
  order_id INT, customer STRING, item STRING, amount INT, price DOUBLE, tag STRING, ts TIMESTAMP(3),
  WATERMARK FOR ts AS ts - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '{DATA / "orders"}', 'format' = 'json')""",
        f"""CREATE TABLE customers (
  customer STRING, city STRING, level INT, since TIMESTAMP(3),
  WATERMARK FOR since AS since - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '{DATA / "customers"}', 'format' = 'json')""",
        f"""CREATE TABLE prices (
  item STRING, unit_price INT, valid_from TIMESTAMP(3), PRIMARY KEY (item) NOT ENFORCED,
  WATERMARK FOR valid_from AS valid_from - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '{DATA / "prices"}', 'format' = 'json')""",
        f"""CREATE TABLE price_changes (
  item STRING, unit_price INT, valid_from TIMESTAMP(3), PRIMARY KEY (item) NOT ENFORCED,
  WATERMARK FOR valid_from AS valid_from - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '{DATA / "price_changes"}', 'format' = 'debezium-json')""",
        # Flink's versioned view: each item's last price by event time (a deduplication), keyed by item
        """CREATE VIEW latest_prices AS SELECT item, unit_price, valid_from FROM (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY item ORDER BY valid_from DESC) AS rn FROM prices) WHERE rn = 1""",
        f"""CREATE TABLE ticker (
  symbol STRING, price BIGINT, tax INT, rowtime TIMESTAMP(3),
  WATERMARK FOR rowtime AS rowtime - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '{DATA / "ticker"}', 'format' = 'json')""",
        f"""CREATE TABLE shipments (
  ship_id INT, order_id INT, ship_ts TIMESTAMP(3),
  WATERMARK FOR ship_ts AS ship_ts - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = '{DATA / "shipments"}', 'format' = 'json')""",
    ]


def streaming_views() -> list[str]:
    """Views over the tables of :func:`ddl` for the streaming entries only: an updating aggregation, and the order changes
    as append-only rows with an op column (the changelog functions, which Flink plans in streaming mode only)."""
    return [
        "CREATE VIEW customer_totals AS SELECT customer, COUNT(*) AS n, SUM(amount) AS total FROM orders GROUP BY customer",
        "CREATE VIEW order_change_rows AS SELECT * FROM TO_CHANGELOG(input => TABLE order_changes)",
        "CREATE VIEW order_change_codes AS SELECT * FROM TO_CHANGELOG(input => TABLE order_changes, op => DESCRIPTOR(__op), "
        "op_mapping => MAP['INSERT', 'c', 'UPDATE_BEFORE', 'ub', 'UPDATE_AFTER', 'u', 'DELETE', 'd'])",
    ]


if __name__ == "__main__":
    write_data()
