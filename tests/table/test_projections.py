"""A projection's columns as PyFlink 2.3 gives them: field access by attribute (``col('r').x``, named ``r$x``) and the
column functions (``with_columns``, ``without_columns``, ``range_``, ``with_all_columns``) in select, add_columns,
group_by, where, drop_columns, rename_columns and function calls, with the same column names and rows, or an error
where PyFlink errs (``projection_scenarios.py``, recorded in ``pyflink_reference/projections_<mode>.txt``).
A bad range names itself and the table's columns; a PyFlink Expression member kindling lacks is refused, never read
as a field (``pyflink_reference/api.json``)."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path

import pytest
from projection_scenarios import run

from kindling.table import expressions as E
from kindling.table.expressions import Expression, col
from kindling.table.pyflink_members import PYFLINK_EXPRESSION_MEMBERS

REFERENCE = Path(__file__).parent / "pyflink_reference"
API = json.loads((REFERENCE / "api.json").read_text())


def _sections(text: str) -> dict[str, list[str]]:
    sections: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("=== "):
            label = line[4:]
            sections[label] = []
        else:
            sections[label].append(line)
    return sections


@pytest.mark.integration
@pytest.mark.parametrize("mode", ["stream", "batch"])
def test_projections_give_pyflinks_columns_and_rows(spark, mode):
    expected = _sections((REFERENCE / f"projections_{mode}.txt").read_text())
    got = _sections(run(mode))
    assert list(got) == list(expected)
    different = {label: (expected[label], got[label]) for label in expected if got[label] != expected[label]}
    assert different == {}


@pytest.mark.integration
def test_a_bad_column_function_names_itself_and_the_tables_columns(spark):
    from kindling.table import EnvironmentSettings, TableEnvironment

    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    tab = t_env.from_elements([(1, "p", 2.5)], ["a", "b", "c"])
    columns = "the table's columns are a, b, c (indices 1 to 3)"
    bad = {
        "with_columns(range_(2, 9)): there is no column 9": lambda: tab.select(E.with_columns(E.range_(2, 9))),
        "without_columns(range_('b', 'zz')): there is no column 'zz'": lambda: tab.select(E.without_columns(E.range_("b", "zz"))),
        "with_columns(range_(3, 1)): the range's start 3 comes after its end 1": lambda: tab.select(E.with_columns(E.range_(3, 1))),
        "with_columns(col('zz')): there is no column 'zz'": lambda: tab.add_columns(E.with_columns(E.col("zz"))),
        "range_(1, 2) selects columns only as an argument of with_columns(...) or without_columns(...)":
            lambda: tab.select(E.range_(1, 2)),
    }
    for message, build in bad.items():
        with pytest.raises(ValueError) as raised:
            build()
        assert str(raised.value) == f"{message}; {columns}"
    with pytest.raises(ValueError, match=r"not 'b' \(a Python string is a literal, not a column: col\('b'\)\)"):
        E.with_columns("b")


def test_kindling_knows_pyflinks_expression_members():
    """The names PyFlink's Expression has (recorded), which kindling's __getattr__ never reads as fields."""
    assert PYFLINK_EXPRESSION_MEMBERS == set(API["members"]["Expression"])
    public = {n for n in dir(Expression) if not n.startswith("_")}
    assert public <= PYFLINK_EXPRESSION_MEMBERS, "a kindling-only public member would hide a ROW field of that name"


def test_an_unknown_attribute_is_a_field_and_a_pyflink_member_kindling_lacks_is_refused(monkeypatch):
    assert str(col("r").x) == str(col("r").get("x")) == "`r`.`x`"
    assert str(col("r").name.first) == "`r`.`name`.`first`"  # 'name' is a field, as in PyFlink
    monkeypatch.delattr(Expression, "json_quote")  # as if kindling lacked one of PyFlink's methods
    with pytest.raises(AttributeError, match="'json_quote' is not supported by kindling"):
        col("j").json_quote  # noqa: B018 - the attribute a program would read


def test_an_expression_still_copies_pickles_and_answers_hasattr():
    e = (col("r").x + 1).alias("y")
    assert not hasattr(e, "__array__") and not hasattr(e, "_missing")
    for clone in (copy.copy(e), copy.deepcopy(e), pickle.loads(pickle.dumps(e))):
        assert str(clone) == str(e) == "(`r`.`x` + 1) AS `y`"
