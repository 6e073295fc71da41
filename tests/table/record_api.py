"""Record facts of PyFlink 2.3's Table API surface into ``pyflink_reference/api.json``: the public members of
``Expression`` and of the table environments, and what a fresh TableEnvironment lists (functions, modules, models,
materialized tables, ``SHOW [USER] FUNCTIONS``) and answers when a model that does not exist is dropped.

Run in PyFlink's venv: ``.venv/pyflink/bin/python tests/table/record_api.py``. ``observe`` runs on kindling too, in
``test_table_environment_lists.py`` and ``test_projections.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).parent / "pyflink_reference" / "api.json"
USER_FUNCTIONS = {"system": "myf", "temporary": "Zf"}  # registered before list_functions (Flink lowercases 'Zf')


def _error(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if "Exception" in line]
    return (lines[-1] if lines else str(exc).splitlines()[0]).split("Exception: ")[-1]


def observe(t_env: Any, udf: Any, data_types: Any) -> dict[str, Any]:
    """What a fresh (batch) TableEnvironment lists and answers; the functions with two user functions registered."""
    facts: dict[str, Any] = {"list_modules": t_env.list_modules(),
                             "list_full_modules": [[m.name(), m.used(), repr(m)] for m in t_env.list_full_modules()],
                             "list_materialized_tables": t_env.list_materialized_tables(),
                             "list_models": t_env.list_models(), "list_temporary_models": t_env.list_temporary_models(),
                             "drop_model": t_env.drop_model("m"), "drop_temporary_model": t_env.drop_temporary_model("m")}
    try:
        t_env.drop_model("m", False)
        facts["drop_model_not_ignored"] = None
    except Exception as exc:  # Flink's refusal is the answer
        facts["drop_model_not_ignored"] = _error(exc)
    identity = udf(lambda x: x, result_type=data_types.INT())
    t_env.create_temporary_system_function(USER_FUNCTIONS["system"], identity)
    t_env.create_temporary_function(USER_FUNCTIONS["temporary"], identity)
    facts["list_user_defined_functions"] = t_env.list_user_defined_functions()
    facts["list_functions"] = t_env.list_functions()
    for statement in ("SHOW FUNCTIONS", "SHOW USER FUNCTIONS"):
        with t_env.execute_sql(statement).collect() as rows:
            facts[statement] = [row[0] for row in rows]
    return facts


def members() -> dict[str, list[str]]:
    """The public members of PyFlink's Expression and table environments."""
    from pyflink.table import StreamTableEnvironment, TableEnvironment
    from pyflink.table.expression import Expression

    def public(cls: type) -> list[str]:
        return sorted(n for n in dir(cls) if not n.startswith("_"))

    return {"Expression": public(Expression), "TableEnvironment": public(TableEnvironment),
            "StreamTableEnvironment": public(StreamTableEnvironment)}


if __name__ == "__main__":
    from pyflink.table import DataTypes, EnvironmentSettings, TableEnvironment
    from pyflink.table.udf import udf

    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    builtin = t_env.list_functions()
    facts = observe(t_env, udf, DataTypes)
    OUT.write_text(json.dumps({"members": members(), "builtin_functions": builtin, **facts}, indent=1) + "\n")
