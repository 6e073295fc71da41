"""Expected Nexmark results, computed with DuckDB from the materialised events, following Flink's semantics.

Each query below is the suite's query restated for a batch engine: windows become arithmetic
on epoch milliseconds (tumbling and hopping windows aligned to the epoch, as Flink's are;
sessions merge when the next bid is at most the gap after the previous one, as Flink's
``TimeWindow.intersects`` does), ``AVG`` over BIGINT truncates to BIGINT as Flink's does,
``REGEXP_EXTRACT`` without a match is NULL, and ranking ties are broken by arrival (``seq``), as
Flink's Top-N and deduplication do for an in-order source. Every window fires, since a bounded
source ends with Flink's final watermark.

A query whose result depends on the wall clock (q12: processing-time windows) has no reference.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from collections import Counter

NO_REFERENCE = {
    "q12": "processing-time windows (PROCTIME()): the result depends on the wall clock, so no run-independent reference exists",
}

_TUMBLE = "(epoch_ms(dateTime) - epoch_ms(dateTime) % 10000)"

REFERENCE_SQL: dict[str, str] = {
    "q0": "SELECT auction, bidder, price, dateTime, extra FROM bid",
    "q1": "SELECT auction, bidder, CAST(0.908 * price AS DECIMAL(23, 3)), dateTime, extra FROM bid",
    "q2": "SELECT auction, price FROM bid WHERE auction % 123 = 0",
    "q3": """
        SELECT P.name, P.city, P.state, A.id
        FROM auction A JOIN person P ON A.seller = P.id
        WHERE A.category = 10 AND P.state IN ('OR', 'ID', 'CA')""",
    "q4": """
        SELECT category, CAST(SUM(final) // COUNT(*) AS BIGINT)
        FROM (SELECT MAX(B.price) AS final, A.category
              FROM auction A JOIN bid B ON A.id = B.auction
              WHERE B.dateTime BETWEEN A.dateTime AND A.expires
              GROUP BY A.id, A.category)
        GROUP BY category""",
    "q5": """
        WITH windows AS (
            SELECT auction, (epoch_ms(dateTime) - epoch_ms(dateTime) % 2000) - k * 2000 AS ws
            FROM bid, range(0, 5) AS t(k)),
        auction_bids AS (SELECT auction, ws, COUNT(*) AS num FROM windows GROUP BY auction, ws),
        max_bids AS (SELECT ws, MAX(num) AS maxn FROM auction_bids GROUP BY ws)
        SELECT a.auction, a.num FROM auction_bids a JOIN max_bids m ON a.ws = m.ws AND a.num >= m.maxn""",
    "q7": f"""
        WITH b1 AS (
            SELECT MAX(price) AS maxprice, epoch_ms(ws + 10000) AS dt
            FROM (SELECT price, {_TUMBLE} AS ws FROM bid) GROUP BY ws)
        SELECT B.auction, B.price, B.bidder, B.dateTime, B.extra
        FROM bid B JOIN b1 ON B.price = b1.maxprice
        WHERE B.dateTime BETWEEN b1.dt - INTERVAL 10 SECOND AND b1.dt""",
    "q8": f"""
        WITH p AS (SELECT DISTINCT id, name, {_TUMBLE} AS ws FROM person),
             a AS (SELECT DISTINCT seller, {_TUMBLE} AS ws FROM auction)
        SELECT p.id, p.name, epoch_ms(p.ws) FROM p JOIN a ON p.id = a.seller AND p.ws = a.ws""",
    "q9": """
        SELECT id, itemName, description, initialBid, reserve, dateTime, expires, seller, category, extra,
               auction, bidder, price, bid_dateTime, bid_extra
        FROM (SELECT A.id, A.itemName, A.description, A.initialBid, A.reserve, A.dateTime, A.expires, A.seller,
                     A.category, A.extra, B.auction, B.bidder, B.price, B.dateTime AS bid_dateTime, B.extra AS bid_extra,
                     ROW_NUMBER() OVER (PARTITION BY A.id ORDER BY B.price DESC, B.dateTime ASC, B.seq ASC) AS rownum
              FROM auction A JOIN bid B ON A.id = B.auction
              WHERE B.dateTime BETWEEN A.dateTime AND A.expires)
        WHERE rownum <= 1""",
    "q11": """
        WITH starts AS (
            SELECT bidder, dateTime, seq,
                   CASE WHEN epoch_ms(dateTime) - LAG(epoch_ms(dateTime)) OVER (PARTITION BY bidder ORDER BY dateTime, seq) <= 10000
                        THEN 0 ELSE 1 END AS new_session
            FROM bid),
        sessions AS (
            SELECT bidder, dateTime,
                   SUM(new_session) OVER (PARTITION BY bidder ORDER BY dateTime, seq ROWS UNBOUNDED PRECEDING) AS session
            FROM starts)
        SELECT bidder, COUNT(*), MIN(dateTime), MAX(dateTime) + INTERVAL 10 SECOND
        FROM sessions GROUP BY bidder, session""",
    "q14": """
        SELECT auction, bidder, CAST(0.908 * price AS DECIMAL(23, 3)),
               CASE WHEN hour(dateTime) >= 8 AND hour(dateTime) <= 18 THEN 'dayTime'
                    WHEN hour(dateTime) <= 6 OR hour(dateTime) >= 20 THEN 'nightTime'
                    ELSE 'otherTime' END,
               dateTime, extra, CAST(length(extra) - length(replace(extra, 'c', '')) AS BIGINT)
        FROM bid WHERE 0.908 * price > 1000000 AND 0.908 * price < 50000000""",
    "q15": """
        SELECT strftime(dateTime, '%Y-%m-%d') AS day,
               COUNT(*),
               COUNT(*) FILTER (WHERE price < 10000),
               COUNT(*) FILTER (WHERE price >= 10000 AND price < 1000000),
               COUNT(*) FILTER (WHERE price >= 1000000),
               COUNT(DISTINCT bidder),
               COUNT(DISTINCT bidder) FILTER (WHERE price < 10000),
               COUNT(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000),
               COUNT(DISTINCT bidder) FILTER (WHERE price >= 1000000),
               COUNT(DISTINCT auction),
               COUNT(DISTINCT auction) FILTER (WHERE price < 10000),
               COUNT(DISTINCT auction) FILTER (WHERE price >= 10000 AND price < 1000000),
               COUNT(DISTINCT auction) FILTER (WHERE price >= 1000000)
        FROM bid GROUP BY day""",
    "q16": """
        SELECT channel, strftime(dateTime, '%Y-%m-%d') AS day, MAX(strftime(dateTime, '%H:%M')),
               COUNT(*),
               COUNT(*) FILTER (WHERE price < 10000),
               COUNT(*) FILTER (WHERE price >= 10000 AND price < 1000000),
               COUNT(*) FILTER (WHERE price >= 1000000),
               COUNT(DISTINCT bidder),
               COUNT(DISTINCT bidder) FILTER (WHERE price < 10000),
               COUNT(DISTINCT bidder) FILTER (WHERE price >= 10000 AND price < 1000000),
               COUNT(DISTINCT bidder) FILTER (WHERE price >= 1000000),
               COUNT(DISTINCT auction),
               COUNT(DISTINCT auction) FILTER (WHERE price < 10000),
               COUNT(DISTINCT auction) FILTER (WHERE price >= 10000 AND price < 1000000),
               COUNT(DISTINCT auction) FILTER (WHERE price >= 1000000)
        FROM bid GROUP BY channel, day""",
    "q17": """
        SELECT auction, strftime(dateTime, '%Y-%m-%d') AS day,
               COUNT(*),
               COUNT(*) FILTER (WHERE price < 10000),
               COUNT(*) FILTER (WHERE price >= 10000 AND price < 1000000),
               COUNT(*) FILTER (WHERE price >= 1000000),
               MIN(price), MAX(price), CAST(SUM(price) // COUNT(*) AS BIGINT), CAST(SUM(price) AS BIGINT)
        FROM bid GROUP BY auction, day""",
    "q18": """
        SELECT auction, bidder, price, channel, url, dateTime, extra
        FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction ORDER BY dateTime DESC, seq DESC) AS rank_number FROM bid)
        WHERE rank_number <= 1""",
    "q19": """
        SELECT auction, bidder, price, channel, url, dateTime, extra, rank_number
        FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC, seq ASC) AS rank_number FROM bid)
        WHERE rank_number <= 10""",
    "q20": """
        SELECT B.auction, B.bidder, B.price, B.channel, B.url, B.dateTime, B.extra,
               A.itemName, A.description, A.initialBid, A.reserve, A.dateTime, A.expires, A.seller, A.category, A.extra
        FROM bid B JOIN auction A ON B.auction = A.id
        WHERE A.category = 10""",
    "q21": """
        SELECT auction, bidder, price, channel,
               CASE WHEN lower(channel) = 'apple' THEN '0'
                    WHEN lower(channel) = 'google' THEN '1'
                    WHEN lower(channel) = 'facebook' THEN '2'
                    WHEN lower(channel) = 'baidu' THEN '3'
                    ELSE channel_id END
        FROM (SELECT *, CASE WHEN regexp_matches(url, '(&|^)channel_id=([^&]*)')
                             THEN regexp_extract(url, '(&|^)channel_id=([^&]*)', 2) END AS channel_id
              FROM bid)
        WHERE channel_id IS NOT NULL OR lower(channel) IN ('apple', 'google', 'facebook', 'baidu')""",
    "q22": """
        SELECT auction, bidder, price, channel,
               string_split(url, '/')[4], string_split(url, '/')[5], string_split(url, '/')[6]
        FROM bid""",
}


def expected_rows(query: str, events: dict[str, Path]) -> Optional[list[tuple]]:
    """The query's expected final rows (a multiset, as tuples in the query's column order); None without a reference."""
    import duckdb

    if query in NO_REFERENCE:
        return None
    connection = duckdb.connect()
    try:
        connection.execute("SET TimeZone = 'UTC'")
        for kind, path in events.items():
            connection.execute(f"CREATE VIEW {kind} AS SELECT * FROM read_parquet('{path}')")
        return [tuple(row) for row in connection.execute(REFERENCE_SQL[query]).fetchall()]
    finally:
        connection.close()


def _from_json(value):
    from datetime import datetime
    from decimal import Decimal

    if isinstance(value, dict) and "timestamp" in value:
        return datetime.fromisoformat(value["timestamp"])
    if isinstance(value, dict) and "decimal" in value:
        return Decimal(value["decimal"])
    return value


# Flink's Top-N may emit an upsert changelog (+U without -U) keyed by the partition key (and rank);
# these are the keys, as column positions, to apply such a changelog.
FLINK_UPSERT_KEYS = {"q9": [0], "q18": [1, 0], "q19": [0, 7]}


def pyflink_rows(python: str, query: str, events_json: Path, timeout: float = 1800) -> "Counter":
    """The query's final rows on PyFlink (changelog applied), to check this module's semantics against Flink itself."""
    import json
    import subprocess
    from collections import Counter

    from check import final_rows, normalise

    here = Path(__file__).resolve().parent
    command = [python, str(here / "pyflink_job.py"), "--events-json", str(events_json), "--ddl", str(here / "ddl.sql"),
               "--query", str(here / "queries" / f"{query}.sql"), "--collect"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, start_new_session=True)
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if "Exception" in line or "Error" in line]
        raise RuntimeError((errors[-1] if errors else f"exit code {done.returncode}")[:300])
    changes = []
    for line in done.stdout.splitlines():
        if line.startswith("PYFLINK_ROW "):
            change = json.loads(line[len("PYFLINK_ROW "):])
            changes.append((change["kind"], tuple(normalise(_from_json(v)) for v in change["row"])))
    upsert = any(kind == "+U" for kind, _ in changes) and not any(kind == "-U" for kind, _ in changes)
    if upsert and query not in FLINK_UPSERT_KEYS:
        raise RuntimeError(f"PyFlink emitted an upsert changelog for {query} and its key is not known here")
    return Counter(final_rows(changes, FLINK_UPSERT_KEYS[query] if upsert else None))


def main() -> int:
    """``python reference.py --against-pyflink [--events N] [--queries ...]``: compare the references with PyFlink's results."""
    import argparse
    import sys
    from collections import Counter

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import suite
    from check import ARTIFACTS, compare, normalise

    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--against-pyflink", action="store_true", required=True)
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--tps", type=int, default=10_000)
    parser.add_argument("--queries", default=",".join(q for q in suite.QUERIES if q not in NO_REFERENCE))
    parser.add_argument("--pyflink-python", default=str(suite.ROOT / ".venv" / "pyflink" / "bin" / "python"))
    args = parser.parse_args()
    workload = suite.Workload(events=args.events, tps=args.tps)
    events = suite.materialise(workload, ARTIFACTS / f"events-{args.events}-{args.tps}")
    events_json = suite.write_flink_json(workload, ARTIFACTS / f"events-{args.events}-{args.tps}.json")
    agree = 0
    queries = [q for q in args.queries.split(",") if q]
    for query in queries:
        want = Counter(tuple(normalise(v) for v in row) for row in expected_rows(query, events))
        try:
            got = pyflink_rows(args.pyflink_python, query, events_json)
            outcome = compare(query, got, want, 0.0)
            line = ("reference agrees with PyFlink" if outcome.conformant else "reference DIFFERS from PyFlink") + f" ({outcome.detail})"
            agree += outcome.conformant
        except Exception as exc:
            line = f"PyFlink failed: {exc}"
        print(f"{query}: {line}", flush=True)
    print(f"agree={agree} total={len(queries)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
