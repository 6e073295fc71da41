"""``kindling demo payments`` end to end with a short duration: the index equals the generated payments."""

from __future__ import annotations

import io
import re

import pytest

from kindling.playground.payments import script_for, wrong_provinces

pytestmark = pytest.mark.integration


def test_script_points_at_the_run_servers():
    script = script_for("127.0.0.1:1111", "http://127.0.0.1:2222")
    assert "'127.0.0.1:1111'" in script and "'http://127.0.0.1:2222'" in script
    assert "'connector' = 'elasticsearch-7'" in script and "LANGUAGE PYTHON" in script
    assert wrong_provinces({"a": 1.0, "b": 2.0}, {"a": 1.0, "c": 3.0}) == ["b", "c"]


def test_payments_demo_short_run(spark):
    from kindling.playground.payments import run_payments_demo

    out = io.StringIO()
    code = run_payments_demo(duration=10, rate=20, out=out)
    text = out.getvalue()
    match = re.search(r"^provinces=(\d+) wrong=(\d+)$", text, re.M)
    assert match, text
    assert code == 0 and int(match.group(1)) >= 1 and match.group(2) == "0", text
