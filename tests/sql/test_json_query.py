"""JSON_VALUE and JSON_QUERY write numbers with Flink's digits, or fail naming the function where the document's digits
are not known (the differential corpus holds the answers that match PyFlink 2.3's; a failing job cannot be there).

PyFlink 2.3 answers JSON_VALUE('{"p": 1.50}', '$.p') with '1.50', JSON_VALUE('{"e": 1e3}', '$.e') with '1E+3',
JSON_VALUE('{"z": -0.0}', '$.z') with '0.0' and JSON_QUERY('{"a": [1.0]}', '$.a') with '[1.0]': digits Spark's
VARIANT does not keep."""

from __future__ import annotations

import pytest

from kindling.env import StreamEnvironment
from kindling.runtime.job import JobFailedError

pytestmark = pytest.mark.integration


@pytest.fixture
def batch_env(spark, tmp_path):
    return StreamEnvironment({"execution.runtime-mode": "batch", "state.checkpoints.dir": str(tmp_path / "checkpoints")},
                             spark=spark)


@pytest.mark.parametrize("call, function", [
    ("JSON_VALUE('{\"p\": 1.50}', '$.p')", "JSON_VALUE"),
    ("JSON_VALUE('{\"e\": 1e3}', '$.e')", "JSON_VALUE"),
    ("JSON_VALUE('{\"z\": -0.0}', '$.z')", "JSON_VALUE"),
    ("JSON_QUERY('{\"a\": [1.0, 2]}', '$.a')", "JSON_QUERY"),
    ("JSON_QUERY('{\"a\": {\"t\": 0.0000001}}', '$.a')", "JSON_QUERY"),
])
def test_numbers_whose_digits_spark_does_not_keep_fail_the_job_naming_the_function(batch_env, call, function):
    result = batch_env.execute_sql(f"SELECT {call} AS v")
    with pytest.raises(JobFailedError, match=f"{function} of a number written with trailing zeros"):
        result.wait(300)


def test_the_same_numbers_as_written_without_lost_digits_give_flinks_text(batch_env):
    # PyFlink 2.3: '1.5', '2.25', '[1,2.5]', and 2.50 elsewhere in the document does not matter to JSON_VALUE
    rows = batch_env.execute_sql("SELECT JSON_VALUE('{\"p\": 1.5}', '$.p'), JSON_VALUE('{\"p\": 2.25, \"q\": 2.50}', '$.p'), "
                                 "JSON_QUERY('{\"a\": [1, 2.5]}', '$.a'), JSON_VALUE('{\"p\": 1.50}', '$.p' RETURNING DOUBLE)").collect()
    assert [tuple(r) for r in rows] == [("1.5", "2.25", "[1,2.5]", 1.5)]
