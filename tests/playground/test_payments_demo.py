"""``kindling demo payments`` end to end with a short duration: the index equals the generated payments.

The job runs as the SQL file and as the walkthrough's Table API program; the program's query also gives
PyFlink 2.3's recorded tableau, byte for byte, over fixed payments in batch mode.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from kindling.playground.payments import TABLE_API_FILE, script_for, wrong_provinces

pytestmark = pytest.mark.integration

HERE = Path(__file__).parent


def test_script_points_at_the_run_servers():
    script = script_for("127.0.0.1:1111", "http://127.0.0.1:2222")
    assert "'127.0.0.1:1111'" in script and "'http://127.0.0.1:2222'" in script
    assert "'connector' = 'elasticsearch-7'" in script and "LANGUAGE PYTHON" in script
    assert wrong_provinces({"a": 1.0, "b": 2.0}, {"a": 1.0, "c": 3.0}) == ["b", "c"]


def test_the_table_api_program_gives_pyflinks_totals(spark, capsys):
    from kindling.program import run_program

    assert "create_temporary_system_function('province_id_to_name'" in TABLE_API_FILE.read_text()
    capsys.readouterr()
    assert run_program(str(HERE / "payments_province_totals.py")) == 0
    printed = capsys.readouterr().out.splitlines()
    expected = (HERE / "pyflink_reference" / "payments_province_totals.txt").read_text().splitlines()
    # The tableau byte for byte, its rows in any order: a GROUP BY without ORDER BY has none.
    assert printed[:3] == expected[:3] and printed[-2:] == expected[-2:]
    assert sorted(printed[3:-2]) == sorted(expected[3:-2])


@pytest.mark.parametrize("table_api", [False, True], ids=["sql-file", "table-api-program"])
def test_payments_demo_short_run(spark, table_api):
    from kindling.playground.payments import run_payments_demo

    out = io.StringIO()
    code = run_payments_demo(duration=10, rate=20, out=out, table_api=table_api)
    text = out.getvalue()
    assert ("Table API program" in text) == table_api, text
    match = re.search(r"^provinces=(\d+) wrong=(\d+)$", text, re.M)
    assert match, text
    assert code == 0 and int(match.group(1)) >= 1 and match.group(2) == "0", text
