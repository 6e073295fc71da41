"""Table API expressions give PyFlink 2.3's answer, or refuse naming the function; never another answer.

Every case of ``expression_cases.py`` was run under PyFlink 2.3 (``record_expressions.py`` ->
``pyflink_reference/expressions.json``: rows as text, the column's type as Flink prints it, or PyFlink's error). Here
kindling plans the cases in groups (a group that fails to plan is halved until each case that plans is found), then
runs the planned scalar cases as a few selects of many columns and the aggregates as another; the cases that fail to
run are found with plain Spark jobs of the same selects, and the others run again as one kindling job."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from expression_cases import Api, Case, cases, rows_of

from kindling.sql.builtin_functions import FLINK_FUNCTIONS, NOT_LISTED, PARTLY_REFUSED
from kindling.sql.column_types import known_types
from kindling.table import expressions
from kindling.table.expressions import Expression

pytestmark = pytest.mark.integration

REFERENCE = json.loads((Path(__file__).parent / "pyflink_reference" / "expressions.json").read_text())


# Cases where kindling answers and PyFlink refuses, kindling not knowing why: Flink's Table API TEMPORAL_OVERLAPS
# refuses time points of different nullability (a DATE column against a DATE literal, "DATE != DATE NOT NULL"), which
# kindling's SQL text does not know. Each must stay different (strict), or come off the list.
KNOWN_DIFFERENT = {"temporal-overlaps-dates"}
# Cases kindling refuses while running (OVERLAY past the string's end; TO_DATE of text that is no date, where Flink
# gives NULL): run alone so as not to fail the job of the others. Checked as any case is.
RUN_APART = {"overlay", "overlay-length", "to-date-column"}


def _named(message: str, case: str, sql: str = "") -> bool:
    """Whether a refusal names the case's function or method: the case's name (``regexp-extract-all-group``), a shorter
    prefix of it that is a method or function of the Table API (``regexp_extract_all``), spelt either way, or a
    function the case's SQL calls (``BITMAP_TO_STRING(BITMAP_BUILD(arr))``)."""
    text = re.sub(r"[^a-z0-9]+", "_", message.lower())
    words = case.split("-")
    names = ["_".join(words[:n]) for n in range(len(words), 0, -1)]
    names = [n for n in names if "_" in n or hasattr(Expression, n) or hasattr(expressions, n)]
    names += [f.lower() for f in re.findall(r"([A-Z][A-Z0-9_]+)\(", sql) if f not in ("CAST", "COALESCE")]
    return any(re.search(rf"(^|_){n.replace('_', '_?')}(_|$)", text) for n in names)


class _Run:
    """Each case's outcome under kindling: {'rows', 'type'} or {'error'}."""

    PLANNED_TOGETHER = 16  # cases planned as one select: a group that fails to plan is halved until each half plans
    RUN_TOGETHER = 256  # cases run as one job

    def __init__(self) -> None:
        self.api = Api("kindling")
        self.table = self.api.table(self.api.t_env())
        self.outcomes: dict[str, dict[str, Any]] = {}

    def select(self, kind: str, expressions: list[Any]) -> Any:
        fields = [e.alias(f"v{i}") for i, e in enumerate(expressions)]
        return self.table.select(self.api.col("id"), *fields) if kind == "scalar" else self.table.select(*fields)

    def run_all(self) -> dict[str, dict[str, Any]]:
        built: dict[str, list[tuple[Case, Any]]] = {"scalar": [], "aggregate": [], "table": []}
        for case in cases(self.api):
            try:
                built[case.kind].append((case, case.build(self.table) if case.kind == "table" else case.build()))
            except Exception as exc:
                self.outcomes[case.name] = {"error": f"{type(exc).__name__}: {exc}"}
        self.sql = {case.name: str(e) for kind in ("scalar", "aggregate") for case, e in built[kind]}
        for kind in ("scalar", "aggregate"):
            planned = []
            for start in range(0, len(built[kind]), self.PLANNED_TOGETHER):
                planned += self._plan(kind, built[kind][start:start + self.PLANNED_TOGETHER])
            # a case PyFlink fails is likely to fail here too: those run alone, not failing the others' job
            failing = [p for p in planned if "error" in REFERENCE[p[0].name] or p[0].name in RUN_APART]
            for one in failing:
                self._run(kind, [one])
            rest = [p for p in planned if p not in failing]
            for start in range(0, len(rest), self.RUN_TOGETHER):
                self._run(kind, rest[start:start + self.RUN_TOGETHER])
        for case, table in built["table"]:
            try:
                self.outcomes[case.name] = {"type": None, "rows": rows_of("table", self._collect(table))}
            except Exception as exc:
                self.outcomes[case.name] = {"error": f"{type(exc).__name__}: {exc}"}
        return self.outcomes

    def _failed(self, case: Case, exc: Exception) -> None:
        self.outcomes[case.name] = {"error": f"{type(exc).__name__}: {exc}", "sql": self.sql.get(case.name, "")}

    def _plan(self, kind: str, group: list[tuple[Case, Any]]) -> list[tuple[Case, Any]]:
        """The cases of ``group`` that plan (Spark analyses their select), each with its column's Flink type noted."""
        try:
            types = known_types(self.select(kind, [e for _, e in group]).planned.df)[1 if kind == "scalar" else 0:]
        except Exception as exc:
            if len(group) == 1:
                self._failed(group[0][0], exc)
                return []
            return self._plan(kind, group[:len(group) // 2]) + self._plan(kind, group[len(group) // 2:])
        for (case, _), flink_type in zip(group, types):
            self.outcomes[case.name] = {"type": flink_type}
        return group

    def _run(self, kind: str, group: list[tuple[Case, Any]]) -> None:
        """Run ``group`` as one kindling job; if it fails, find the failing cases with plain Spark jobs of the same
        selects (cheaper than kindling's), each failing one keeping its error, and run the others as one job again."""
        if not group:
            return
        try:
            self._record(kind, group, self._collect(self.select(kind, [e for _, e in group])))
            return
        except Exception as exc:
            if len(group) == 1:
                self._failed(group[0][0], exc)
                return
        failing = self._failing(kind, group)
        for case, _ in failing:
            self._failed(case, failing[(case, _)])
        rest = [c for c in group if c not in failing]
        if not rest:
            return
        self._record(kind, rest, self._collect(self.select(kind, [e for _, e in rest])))

    def _record(self, kind: str, group: list[tuple[Case, Any]], rows: list[Any]) -> None:
        for i, (case, _) in enumerate(group):
            picked = [(r[0], r[i + 1]) for r in rows] if kind == "scalar" else [(r[i],) for r in rows]
            self.outcomes[case.name]["rows"] = rows_of(kind, picked)

    def _failing(self, kind: str, group: list[tuple[Case, Any]]) -> dict[tuple[Case, Any], Exception]:
        try:
            self.select(kind, [e for _, e in group]).to_dataframe().collect()
            return {}
        except Exception as exc:
            if len(group) == 1:
                return {group[0]: exc}
            half = len(group) // 2
            return {**self._failing(kind, group[:half]), **self._failing(kind, group[half:])}

    @staticmethod
    def _collect(table: Any) -> list[Any]:
        with table.execute().collect() as collected:
            return list(collected)


@pytest.fixture(scope="module")
def outcomes(spark) -> dict[str, dict[str, Any]]:
    return _Run().run_all()


def test_every_case_is_recorded(spark) -> None:
    assert [c.name for c in cases(Api("kindling"))] == list(REFERENCE)


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason="known different"))
                                  if n in KNOWN_DIFFERENT else n for n in REFERENCE])
def test_expression_gives_pyflinks_answer_or_refuses_by_name(outcomes: dict[str, dict[str, Any]], name: str) -> None:
    expected, got = REFERENCE[name], outcomes[name]
    if "error" in expected:
        assert "error" in got, f"PyFlink 2.3 refuses {name} ({expected['error']}); kindling answered {got.get('rows')}"
        return
    if "error" in got:
        assert _named(got["error"], name, got.get("sql", "")), f"kindling refuses {name} without naming it: {got['error']}"
        return
    assert got["rows"] == expected["rows"]
    if got["type"] is not None:
        assert got["type"] == expected["type"]


# Cases whose Flink function (as list_functions() names it) their name does not spell.
CASE_FUNCTIONS = {"translate": "TRANSLATE3", "getitem": "at", "bitmap-bytes": "BITMAP_TO_BYTES", "negative": "minusPrefix",
                  "negative-double": "minusPrefix", "json-array-agg": "JSON_ARRAYAGG_NULL_ON_NULL",
                  "json-array-agg-absent": "JSON_ARRAYAGG_ABSENT_ON_NULL", "json-object-agg": "JSON_OBJECTAGG_ABSENT_ON_NULL"}


def _flink_function(case: str) -> str | None:
    """The function of Flink's list_functions() a case calls: the longest run of the case's first words that spells
    one (``array-append-null`` is ARRAY_APPEND, ``char-length`` charLength), or :data:`CASE_FUNCTIONS`'."""
    if case in CASE_FUNCTIONS:
        return CASE_FUNCTIONS[case]
    spelt = {re.sub(r"[^a-z0-9]", "", n.lower()): n for n in FLINK_FUNCTIONS}
    words = case.split("-")
    return next((spelt["".join(words[:n])] for n in range(len(words), 0, -1) if "".join(words[:n]) in spelt), None)


def test_the_functions_kindling_lists_are_those_it_answers(outcomes: dict[str, dict[str, Any]]) -> None:
    """TableEnvironment.list_functions() lists Flink's functions kindling supports: of the cases PyFlink answers, one
    of a listed function is answered (unless its form is one PARTLY_REFUSED names), one of an unlisted function
    refused."""
    wrong = {}
    for name, expected in REFERENCE.items():
        function = _flink_function(name)
        if function is None or "error" in expected:
            continue
        answered = "error" not in outcomes[name]
        if function in NOT_LISTED and answered:
            wrong[name] = f"kindling answers, but does not list {function} ({NOT_LISTED[function]})"
        elif function not in NOT_LISTED and function not in PARTLY_REFUSED and not answered:
            wrong[name] = f"kindling lists {function}, but refuses: {outcomes[name]['error'][:200]}"
    assert wrong == {}
