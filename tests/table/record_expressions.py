"""Record PyFlink 2.3's answer to every case of ``expression_cases.py`` into ``pyflink_reference/expressions.json``.

Run in PyFlink's venv: ``.venv/pyflink/bin/python tests/table/record_expressions.py``. Each case runs as its own batch
job; its result rows (as text) and its column's type as Flink prints it are kept, or PyFlink's error and the stage it
came from (``build``: the Python expression, ``plan``: the select, ``run``: the job)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from expression_cases import Api, cases, column_type, rows_of  # noqa: E402

OUT = Path(__file__).parent / "pyflink_reference" / "expressions.json"


def _error(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    causes = [line for line in lines if "Exception:" in line and not line.startswith("at ")]
    return (causes[-1] if causes else (lines[0] if lines else type(exc).__name__))[:400]


def record(only: set[str]) -> dict[str, dict]:
    api = Api("pyflink")
    t_env = api.t_env()
    table = api.table(t_env)
    results: dict[str, dict] = {}
    for case in cases(api):
        if only and case.name not in only:
            continue
        entry: dict = {"kind": case.kind}
        stage = "build"
        try:
            if case.kind == "table":
                stage = "plan"
                result = case.build(table)
            else:
                expression = case.build()
                stage = "plan"
                fields = [api.col("id"), expression.alias("v")] if case.kind == "scalar" else [expression.alias("v")]
                result = table.select(*fields)
            schema = str(result.get_resolved_schema())
            entry["type"] = column_type(schema, "v") if case.kind != "table" else schema
            stage = "run"
            with result.execute().collect() as collected:
                entry["rows"] = rows_of(case.kind, list(collected))
        except Exception as exc:  # PyFlink's refusal is part of the reference
            entry = {"kind": case.kind, "error": _error(exc), "stage": stage}
        results[case.name] = entry
        print(case.name, json.dumps(entry, ensure_ascii=False)[:300], flush=True)
    return results


if __name__ == "__main__":
    # With case names as arguments, only those are recorded again, into the existing reference.
    only = set(sys.argv[1:])
    previous = json.loads(OUT.read_text()) if only and OUT.exists() else {}
    recorded = record(only)
    names = [c.name for c in cases(Api("pyflink"))]
    OUT.write_text(json.dumps({n: recorded.get(n) or previous[n] for n in names}, indent=1, ensure_ascii=False) + "\n")
