"""Lookup join throughput: 1M probe rows joined with a 100k-row PostgreSQL dimension through a PARTIAL cache.

Starts its own local PostgreSQL with a 100k-row ``customers`` table, then runs, in one SparkSession,

(a) the reference: ``INSERT INTO blackhole SELECT id, cust FROM orders`` over a 1M-row datagen table
    (a sequence id, a random customer id in 0..99,999, ``proc_time AS PROCTIME()``): the same source
    and sink without the join;
(b) kindling's lookup join: ``... JOIN customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.cust = c.id``
    with ``'lookup.cache' = 'PARTIAL'`` and ``'lookup.partial-cache.max-rows' = '100000'``: each Arrow
    batch's distinct missing keys go to PostgreSQL in one query.

Only the jobs are timed, after an untimed warm-up of 10k rows each. The cache hit rate is measured on the
database's side: PostgreSQL's ``pg_stat_user_tables.idx_tup_fetch`` counts the dimension rows the lookups
read (one per missed key), so ``hit rate = 1 - fetched / probe rows``. Prints both rates in rows/s and,
last, ``ratio=<lookup join / no join>``.

    python benchmarks/lookup_join.py [--rows 1000000] [--dimension 100000]
"""

from __future__ import annotations

import argparse
import tempfile
import time

from kindling.local.postgres import LocalPostgres


def fetched_rows(server: LocalPostgres) -> int:
    connection = server.connect()
    value = connection.execute("SELECT COALESCE(idx_tup_fetch, 0) FROM pg_stat_user_tables WHERE relname = 'customers'").fetchone()[0]
    connection.close()
    return int(value)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--dimension", type=int, default=100_000)
    args = parser.parse_args()
    from kindling.env import StreamEnvironment

    with LocalPostgres() as server, tempfile.TemporaryDirectory(prefix="kindling-lookup-bench-") as checkpoints:
        connection = server.connect()
        connection.execute("CREATE TABLE customers (id BIGINT PRIMARY KEY, name VARCHAR(20), country VARCHAR(2))")
        with connection.cursor() as cursor, cursor.copy("COPY customers (id, name, country) FROM STDIN") as copy:
            for i in range(args.dimension):
                copy.write_row((i, f"customer-{i}", ("US", "DE", "FR", "JP")[i % 4]))
        connection.commit()
        connection.execute("ANALYZE customers")
        connection.close()
        env = StreamEnvironment({"state.checkpoints.dir": checkpoints, "execution.checkpointing.interval": "200 ms",
                                 "parallelism.default": 2, "kindling.log.level": "ERROR"})
        env.execute_sql(f"CREATE TABLE customers (id BIGINT, name STRING, country STRING) WITH ('connector' = 'jdbc', "
                        f"'url' = '{server.url}', 'table-name' = 'customers', 'username' = '{server.user}', "
                        f"'password' = '{server.password}', 'lookup.cache' = 'PARTIAL', "
                        f"'lookup.partial-cache.max-rows' = '{args.dimension}')")

        def run(name: str, count: int, joined: bool) -> float:
            env.execute_sql(f"CREATE TABLE {name} (id BIGINT, cust BIGINT, proc_time AS PROCTIME()) WITH ('connector' = 'datagen', "
                            f"'rows-per-second' = '100000000', 'fields.id.kind' = 'sequence', 'fields.id.start' = '0', "
                            f"'fields.id.end' = '{count - 1}', 'fields.cust.min' = '0', 'fields.cust.max' = '{args.dimension - 1}')")
            # one sink per run: a job is named after its sink, and a job of an earlier name resumes its checkpoint
            env.execute_sql(f"CREATE TABLE sink_{name} (id BIGINT, name STRING) WITH ('connector' = 'blackhole')")
            query = (f"INSERT INTO sink_{name} SELECT o.id, c.name FROM {name} AS o JOIN customers FOR SYSTEM_TIME AS OF o.proc_time "
                     "AS c ON o.cust = c.id" if joined else f"INSERT INTO sink_{name} SELECT id, CAST(cust AS STRING) FROM {name}")
            started = time.perf_counter()
            status = env.execute_sql(query).wait(timeout=3600)
            assert status == "FINISHED", status
            return time.perf_counter() - started

        run("warm_plain", 10_000, False)
        run("warm_lookup", 10_000, True)
        plain = run("orders_plain", args.rows, False)
        print(f"no join (datagen -> blackhole): {args.rows} rows in {plain:.2f} s = {args.rows / plain:,.0f} rows/s", flush=True)
        before = fetched_rows(server)
        joined = run("orders_lookup", args.rows, True)
        fetched = fetched_rows(server) - before
        print(f"lookup join (PARTIAL cache, {args.dimension} dimension rows): {args.rows} rows in {joined:.2f} s = "
              f"{args.rows / joined:,.0f} rows/s; dimension rows fetched {fetched}, cache hit rate {1 - fetched / args.rows:.3f}",
              flush=True)
    print(f"ratio={plain / joined:.2f}")


if __name__ == "__main__":
    main()
