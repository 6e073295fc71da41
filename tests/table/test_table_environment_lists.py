"""What a TableEnvironment lists, as PyFlink 2.3 does (``record_api.py`` -> ``pyflink_reference/api.json``): its
functions (Flink's built-in ones kindling supports, and the user's, sorted as Flink sorts them), its modules, and the
models and materialized tables kindling never has; PyFlink's other TableEnvironment methods exist, and those kindling
does not support are refused naming the method."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from record_api import observe

from kindling.sql.builtin_functions import FLINK_FUNCTIONS, NOT_LISTED, PARTLY_REFUSED
from kindling.table import DataTypes, StreamTableEnvironment, TableEnvironment
from kindling.table.udf import udf

API = json.loads((Path(__file__).parent / "pyflink_reference" / "api.json").read_text())

REFUSED = {
    "compile_plan_sql": ("INSERT INTO t SELECT 1",), "load_plan": (None,), "execute_plan": (None,),
    "create_model": ("m", None), "create_temporary_model": ("m", None), "create_catalog": ("c", None),
    "register_catalog": ("c", None), "get_catalog": ("c",), "create_java_function": ("f", "com.x.F"),
    "create_java_temporary_function": ("f", "com.x.F"), "create_java_temporary_system_function": ("f", "com.x.F"),
    "load_module": ("hive", None), "unload_module": ("core",),
}


def test_kindlings_copy_of_flinks_functions_is_pyflinks_list():
    assert list(FLINK_FUNCTIONS) == API["builtin_functions"]
    assert set(NOT_LISTED) <= set(FLINK_FUNCTIONS) and set(PARTLY_REFUSED) <= set(FLINK_FUNCTIONS)
    assert not set(NOT_LISTED) & set(PARTLY_REFUSED)


@pytest.mark.integration
def test_a_fresh_environment_lists_what_pyflink_lists(env):
    """The same answers as PyFlink, except that list_functions leaves out the built-in functions kindling does not
    support (each with its reason in NOT_LISTED), keeping PyFlink's order and its user functions."""
    facts = observe(StreamTableEnvironment.create(env), udf, DataTypes)
    expected = {k: v for k, v in API.items() if k not in ("members", "builtin_functions")}
    expected["list_full_modules"] = [[name, used, text] for name, used, text in expected["list_full_modules"]]
    for listing in ("list_functions", "SHOW FUNCTIONS"):  # Flink's SHOW FUNCTIONS is its list_functions()
        assert facts.pop(listing) == [n for n in expected.pop(listing) if n not in NOT_LISTED], listing
    assert facts == expected


def test_every_pyflink_table_environment_method_is_there():
    for kind, cls in (("TableEnvironment", TableEnvironment), ("StreamTableEnvironment", StreamTableEnvironment)):
        assert [n for n in API["members"][kind] if not hasattr(cls, n)] == []


@pytest.mark.integration
@pytest.mark.parametrize("method", sorted(REFUSED))
def test_a_method_kindling_lacks_is_refused_by_name(env, method):
    t_env = StreamTableEnvironment.create(env)
    with pytest.raises(NotImplementedError, match=f"TableEnvironment.{method} is a PyFlink API that kindling does not support: "):
        getattr(t_env, method)(*REFUSED[method])


@pytest.mark.integration
def test_use_modules_takes_the_core_module_only(env):
    t_env = StreamTableEnvironment.create(env)
    t_env.use_modules("core")
    with pytest.raises(NotImplementedError, match="TableEnvironment.use_modules .* kindling has one module, 'core', not 'hive'"):
        t_env.use_modules("hive")
