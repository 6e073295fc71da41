"""The columns a projection gives: field access by attribute (``col('r').x``, named ``r$x``) and column functions
(``with_columns``, ``without_columns``, ``range_``, ``with_all_columns``) in select, add_columns, group_by, drop_columns,
function calls, ... Run by PyFlink 2.3 to record the reference (``pyflink_reference/projections_<mode>.txt``) and by
kindling in ``test_projections.py``.

Run as ``python projection_scenarios.py stream|batch``: it imports ``pyflink`` when it is installed, else ``kindling``.
Each scenario prints ``=== <label>``, then the column names (planning only), and for the scenarios of :data:`ROWS` the
sorted rows (a job each), or ``ERROR`` (the message is each engine's own; kindling's is checked apart). Updating
queries (grouped) run in batch mode only: a streaming changelog's intermediate rows are not compared here. Column
functions expand alike in both modes (planning a scenario takes a while): streaming mode runs a few of them.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

Scenario = tuple[str, Callable[[], Any]]

# The scenarios whose rows are compared too, per mode (a job each): values computed or filtered, and a few selections;
# the others' column names say which columns they select.
ROWS = {
    "batch": {"attribute", "nested attribute", "attribute cast", "attribute added", "attribute in where", "range of indices",
              "several kinds", "without a range of names", "in a function call", "in call", "in a condition", "dropped",
              "renamed", "grouped by a range", "grouped, range selected", "grouped by without"},
    "stream": {"attribute", "attribute added", "several kinds", "in a function call"},
}
STREAMING_COLUMN_FUNCTIONS = {"range of names", "several kinds", "without columns", "in a function call", "in a condition",
                              "duplicate column", "index past the end"}


def _row_text(value: Any) -> str:
    """A value as text on both sides: a Row as its values in parentheses, strings quoted."""
    if hasattr(value, "_values"):  # PyFlink's Row
        return "(" + ", ".join(_row_text(v) for v in value._values) + ")"
    if isinstance(value, (list, tuple)):
        return "(" + ", ".join(_row_text(v) for v in value) + ")"
    return repr(value)


def field_access(tab: Any, E: Any) -> list[Scenario]:
    """``tab`` has a ROW column ``r`` of ``x INT, name STRING, s ROW<y INT>``."""
    col = E.col
    return [
        ("attribute", lambda: tab.select(col("r").x)),
        ("attribute named like kindling's internals", lambda: tab.select(col("r").name)),
        ("nested attribute", lambda: tab.select(col("r").s.y)),
        ("get", lambda: tab.select(col("r").get("x"))),
        ("attribute aliased", lambda: tab.select(col("r").x.alias("rx"))),
        ("attribute in arithmetic", lambda: tab.select(col("r").x + 1)),
        ("attribute cast", lambda: tab.select(col("r").x.cast(_data_types().STRING()))),
        ("attributes with a column", lambda: tab.select(col("a"), col("r").x, col("r").name)),
        ("attribute added", lambda: tab.add_columns(col("r").x)),
        ("attribute in where", lambda: tab.where(col("r").x > 5).select(col("a"))),
        ("attribute of no field", lambda: tab.select(col("r").nope)),
        ("attribute of a scalar", lambda: tab.select(col("a").nope)),
    ]


def column_functions(tab: Any, E: Any, batch: bool) -> list[Scenario]:
    """``tab`` has the columns a BIGINT, b STRING, c BIGINT, d STRING, e DOUBLE."""
    col, with_columns, without_columns, range_ = E.col, E.with_columns, E.without_columns, E.range_
    out: list[Scenario] = [
        ("range of indices", lambda: tab.select(with_columns(range_(2, 4)))),
        ("range of names", lambda: tab.select(with_columns(range_("b", "d")))),
        ("one index", lambda: tab.select(with_columns(3))),
        ("one column", lambda: tab.select(with_columns(col("c")))),
        ("all by star", lambda: tab.select(with_columns(col("*")))),
        ("with_all_columns", lambda: tab.select(E.with_all_columns())),
        ("several kinds", lambda: tab.select(with_columns(col("e"), range_(1, 2), 4))),
        ("among other fields", lambda: tab.select(col("e"), with_columns(range_("a", "b")), (col("c") + 1).alias("c1"))),
        ("without a range", lambda: tab.select(without_columns(range_(2, 3)))),
        ("without columns", lambda: tab.select(without_columns(col("b"), col("e")))),
        ("without a range of names", lambda: tab.select(without_columns(range_("b", "d")))),
        ("without indices", lambda: tab.select(without_columns(2, 5))),
        ("in a function call", lambda: tab.select(E.concat(with_columns(range_("b", "b")), with_columns(col("d"))).alias("s"))),
        ("in call", lambda: tab.select(E.call("CONCAT", with_columns(col("b"), col("d"))).alias("s"))),
        ("in a condition", lambda: tab.where(with_columns(col("a")) > 1)),
        ("dropped", lambda: tab.drop_columns(with_columns(range_(2, 4)))),
        ("dropped all but", lambda: tab.drop_columns(without_columns(range_(2, 4)))),
        ("renamed", lambda: tab.rename_columns(with_columns(col("a")).alias("z"))),
        ("over a projection", lambda: tab.select(with_columns(range_(1, 2)), col("c")).select(with_columns(range_("b", "c")))),
        ("duplicate column", lambda: tab.select(with_columns(range_(1, 2), col("a")))),
        ("a column twice", lambda: tab.select(col("a"), col("a"))),
        ("an alias repeating a column", lambda: tab.select(col("a"), col("b").alias("a"))),
        ("a column added again", lambda: tab.add_columns(col("a"))),
        ("renamed as another column", lambda: tab.rename_columns(col("a").alias("b"))),
        ("added under existing names", lambda: tab.add_columns(with_columns(range_("a", "b")))),
        ("several columns aliased", lambda: tab.select(with_columns(range_(1, 2)).alias("x"))),
        ("a name as a string", lambda: tab.select(with_columns("c"))),
        ("a range alone", lambda: tab.select(range_(1, 2))),
        ("indices reversed", lambda: tab.select(with_columns(range_(4, 2)))),
        ("names reversed", lambda: tab.select(with_columns(range_("d", "b")))),
        ("index past the end", lambda: tab.select(with_columns(range_(2, 9)))),
        ("index zero", lambda: tab.select(with_columns(range_(0, 2)))),
        ("unknown name in a range", lambda: tab.select(with_columns(range_("b", "zz")))),
        ("unknown column", lambda: tab.select(with_columns(col("zz")))),
        ("unknown index", lambda: tab.select(with_columns(9))),
        ("without an unknown name", lambda: tab.select(without_columns(range_("b", "zz")))),
    ]
    if batch:
        out += [
            ("grouped by a range", lambda: tab.group_by(with_columns(range_(1, 2))).select(col("a"), col("b"), col("c").sum.alias("s"))),
            ("grouped, range selected", lambda: tab.group_by(with_columns(range_(1, 2)))
             .select(with_columns(range_(1, 2)), col("c").sum.alias("s"))),
            ("grouped by without", lambda: tab.group_by(without_columns(range_(3, 5))).select(col("a"), col("b"), col("c").count.alias("n"))),
            ("ordered by a range", lambda: tab.order_by(with_columns(range_(1, 3)))),
        ]
    return out


def _data_types() -> Any:
    try:
        from pyflink.table import DataTypes
    except ImportError:
        from kindling.table import DataTypes
    return DataTypes


def scenarios(t_env: Any, E: Any, batch: bool) -> list[Scenario]:
    """(label, the table it shows) of every scenario."""
    T = _data_types()
    f = T.FIELD
    nested = T.ROW([f("a", T.BIGINT()), f("b", T.STRING()),
                    f("r", T.ROW([f("x", T.INT()), f("name", T.STRING()), f("s", T.ROW([f("y", T.INT())]))]))])
    rows = t_env.from_elements([(1, "p", (5, "n1", (7,))), (2, "q", (6, "n2", (8,)))], nested)
    plain = t_env.from_elements([(1, "p", 10, "u", 2.5), (2, "q", 20, "v", 3.5), (1, "p", 30, "w", 4.5)], ["a", "b", "c", "d", "e"])
    functions = column_functions(plain, E, batch)
    return field_access(rows, E) + (functions if batch else [s for s in functions if s[0] in STREAMING_COLUMN_FUNCTIONS])


def run(mode: str, error_text: Callable[[BaseException], str] = lambda exc: "") -> str:
    """Every scenario's output in ``mode`` (``stream`` or ``batch``); ``error_text`` adds an error's message."""
    try:
        import pyflink.table.expressions as E
        from pyflink.table import EnvironmentSettings, TableEnvironment
    except ImportError:
        import kindling.table.expressions as E  # type: ignore[no-redef]
        from kindling.table import EnvironmentSettings, TableEnvironment  # type: ignore[no-redef]
    batch = mode == "batch"
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode() if batch else EnvironmentSettings.in_streaming_mode())
    out = []
    for label, build in scenarios(t_env, E, batch):
        out.append(f"=== {label}")
        try:
            table = build()
            out.append(f"columns {table.get_schema().get_field_names()}")
            if label in ROWS[mode]:
                with table.execute().collect() as collected:
                    out += sorted(_row_text(r) for r in collected)
        except Exception as exc:  # what a scenario refuses is part of its output
            out.append(f"ERROR {error_text(exc)}".rstrip())
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.stdout.write(run(sys.argv[1] if len(sys.argv) > 1 else "stream"))
