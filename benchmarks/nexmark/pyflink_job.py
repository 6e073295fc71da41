"""Run one Nexmark query on PyFlink (local mini-cluster) over the events as JSON lines; print its timing as JSON.

Runs in the PyFlink venv (``.venv/pyflink``), not kindling's: apache-flink pins library versions
PySpark cannot share. The source is the suite's ``nexmark`` table, read by Flink's filesystem
connector (the nexmark connector's jar cannot be fetched here: there is no Maven); the views
and the query file are the suite's, unchanged but for ``count_char`` (a PyFlink Python UDF).

    python pyflink_job.py --events-json events.json --ddl ddl.sql --query q5.sql --parallelism 2 [--collect]

With ``--collect`` it runs the query's SELECT instead of the INSERT and prints its changelog, one
``PYFLINK_ROW {"kind": "+I", "row": [...]}`` line per change (``reference.py --against-pyflink``).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time

SOURCE_WITH = re.compile(r"\)\s*WITH\s*\((?:.|\n)*?\);", re.IGNORECASE)


def count_char_udf():
    from pyflink.table import DataTypes
    from pyflink.table.udf import udf

    @udf(result_type=DataTypes.BIGINT())
    def count_char(s, character):
        return 0 if s is None else s.count(character[:1])

    return count_char


def _json_value(value):
    import datetime
    import decimal

    if isinstance(value, datetime.datetime):
        return {"timestamp": value.isoformat()}
    if isinstance(value, decimal.Decimal):
        return {"decimal": str(value)}
    return value


def statements(text: str) -> list[str]:
    lines = [line for line in text.splitlines() if not line.lstrip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events-json", required=True)
    parser.add_argument("--ddl", required=True, help="the suite's DDL (kindling's benchmarks/nexmark/ddl.sql)")
    parser.add_argument("--query", required=True)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--collect", action="store_true", help="print the SELECT's changelog instead of timing the INSERT")
    args = parser.parse_args()

    from pyflink.table import EnvironmentSettings, TableEnvironment

    env = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    conf = env.get_config()
    conf.set("parallelism.default", str(args.parallelism))
    conf.set("table.local-time-zone", "UTC")
    conf.set("pipeline.name", args.query)

    ddl = open(args.ddl).read()
    source = (") WITH (\n  'connector' = 'filesystem',\n  'path' = 'file://%s',\n  'format' = 'json',\n"
              "  'json.ignore-parse-errors' = 'false'\n);" % args.events_json)
    ddl = SOURCE_WITH.sub(source, ddl, count=1)
    for statement in statements(ddl):
        env.execute_sql(statement)

    insert = None
    for statement in statements(open(args.query).read()):
        if re.match(r"(?i)^CREATE\s+FUNCTION\s+count_char\b", statement):
            env.create_temporary_system_function("count_char", count_char_udf())
        elif re.match(r"(?i)^INSERT\s+INTO", statement):
            insert = statement
        else:
            env.execute_sql(statement)
    if args.collect:
        select = re.sub(r"(?is)^INSERT\s+INTO\s+[`\w.]+\s*", "", insert, count=1)
        with env.execute_sql(select).collect() as rows:
            for row in rows:
                change = {"kind": str(row.get_row_kind()), "row": [_json_value(v) for v in row]}
                print("PYFLINK_ROW " + json.dumps(change), flush=True)
        return 0
    started = time.monotonic()
    result = env.execute_sql(insert)
    result.wait()
    elapsed = time.monotonic() - started
    print("PYFLINK_RESULT " + json.dumps({"seconds": elapsed}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
