"""Nexmark queries through kindling's SQL equal the DuckDB reference (benchmarks/nexmark/check.py's machinery)."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks" / "nexmark"))

import duckdb  # noqa: E402,F401  - the reference (a test dependency): missing, the test must fail, not skip


@pytest.mark.integration
def test_q1_q2_q4_q5_q7_and_q11_conform_on_a_bounded_run(spark):
    """A projection with DECIMAL arithmetic, a filter, an average over an updating maximum (q4: the retracting
    aggregation), two hop-window aggregations of one view joined (q5: a reused shuffle would hide the watermark
    from one of them), a tumbling window joined back, session windows."""
    import check

    out = io.StringIO()
    # 5,000 events over 20 s of event time: two full tumbling windows and several sessions per bidder
    outcomes = check.check(["q1", "q2", "q4", "q5", "q7", "q11"], events=5000, tps=250, timeout=300, spark=spark, out=out)
    lines = out.getvalue().splitlines()
    assert lines[-1] == "conformant=6 total=6", "\n".join(lines)
    assert [o.query for o in outcomes if o.conformant] == ["q1", "q2", "q4", "q5", "q7", "q11"]


def test_the_checker_applies_retractions_and_upserts_before_comparing():
    import check

    changes = [("+I", (1, "a")), ("+I", (2, "b")), ("-U", (1, "a")), ("+U", (1, "c")), ("+I", (2, "b")), ("-D", (2, "b"))]
    assert check.final_rows(changes, None) == {(1, "c"): 1, (2, "b"): 1}
    upserts = [("+U", (1, "a")), ("+U", (2, "b")), ("+U", (1, "c")), ("-D", (2, "x"))]
    assert check.final_rows(upserts, [0]) == {(1, "c"): 1}
    assert check.compare("qx", check.final_rows(changes, None), check.final_rows(changes, None), 0).conformant
    different = check.compare("qx", check.final_rows(changes, None), check.final_rows(upserts, [0]), 0)
    assert not different.conformant and "1 unexpected" in different.detail


def test_every_suite_query_has_a_reference_or_a_stated_reason():
    import reference
    import suite

    for query in suite.QUERIES:
        assert (query in reference.REFERENCE_SQL) != (query in reference.NO_REFERENCE), query
        setup, select = suite.select_of(suite.query_text(query))
        assert select.lstrip().upper().startswith("SELECT"), query
    status = (Path(suite.HERE) / "STATUS.md").read_text()
    for query in reference.NO_REFERENCE:
        assert f"| {query} |" in status
