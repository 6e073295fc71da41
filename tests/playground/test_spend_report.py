"""The spend-report playground end to end: Kafka -> SQL job -> MariaDB, checked against the generated transactions."""

from __future__ import annotations

import io
import re
from datetime import datetime

import pytest

from kindling.playground.spend_report import TransactionGenerator, _statements, job_sql, wrong_rows


def test_generator_spreads_accounts_and_hours():
    generator = TransactionGenerator("unused:1")
    first = [generator.transaction(i) for i in range(10)]
    assert [t[0] for t in first] == [1, 2, 3, 4, 5, 1, 2, 3, 4, 5]
    assert all(1 <= t[1] <= 1000 for t in first)
    assert first[0][2] == datetime(2024, 1, 1) and first[9][2] == datetime(2024, 1, 1, 0, 9)


def test_report_check_counts_missing_extra_and_wrong_rows():
    hour = datetime(2024, 1, 1)
    assert wrong_rows({(1, hour): 5, (2, hour): 3}, {(1, hour): 5, (2, hour): 4, (3, hour): 1}) == 2
    assert wrong_rows({(1, hour): 5}, {(1, hour): 5}) == 0


def test_the_table_api_program_builds_the_walkthrough_query():
    from kindling.playground.spend_report import table_api_program

    program = table_api_program()

    class Transactions:  # stands for the transactions Table: records the query the program builds
        def __init__(self, steps=()):
            self.steps = list(steps)

        def select(self, *fields):
            return Transactions(self.steps + [("select", [str(f) for f in fields])])

        def group_by(self, *fields):
            return Transactions(self.steps + [("group_by", [str(f) for f in fields])])

    steps = program.report(Transactions()).steps
    assert steps == [("select", ["`account_id`", "FLOOR(`transaction_time` TO HOUR) AS `log_ts`", "`amount`"]),
                     ("group_by", ["`account_id`", "`log_ts`"]),
                     ("select", ["`account_id`", "`log_ts`", "SUM(`amount`) AS `amount`"])]


def test_shipped_sql_has_the_walkthrough_query():
    class Server:
        url, user, password = "jdbc:mysql://127.0.0.1:1/kindling", "kindling", "pw"

    statements = _statements(job_sql("127.0.0.1:9", Server()))
    assert len(statements) == 3 and "${" not in " ".join(statements)
    assert "FLOOR(transaction_time TO HOUR)" in statements[2] and "'connector'  = 'jdbc'" in statements[1]


@pytest.mark.integration
@pytest.mark.parametrize("table_api", [False, True], ids=["sql-file", "table-api-program"])
def test_demo_runs_end_to_end(table_api):
    from kindling.playground.spend_report import run_spend_report_demo

    out = io.StringIO()
    status = run_spend_report_demo(duration=25, rate=40, out=out, table_api=table_api)
    text = out.getvalue()
    last = text.strip().splitlines()[-1]
    match = re.fullmatch(r"accounts=(\d+) hours=(\d+) wrong=(\d+)", last)
    assert match is not None, text
    assert status == 0, text
    assert int(match.group(1)) == 5 and int(match.group(2)) >= 2 and int(match.group(3)) == 0, text
