"""A jdbc password never shows: not in a job's log output, not in EXPLAIN, not in exceptions, not in the REST API.

One job with a known password (PostgreSQL's sink and scan, DEBUG logging) runs under a job manager of this module's
own, started as a user starts one (``kindling cluster start``); every REST answer about it, the job manager's and the
driver's logs are searched for the password. In-process: EXPLAIN of an INSERT and of a SELECT reading the table, and
the exceptions of a failed login, a missing table and a failed commit, each carrying the password in a URL too.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from jdbc_helpers import collect, execute, table_name, with_options  # noqa: E402

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]


def _kindling(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "kindling.cli", *args], capture_output=True, text=True, timeout=timeout,
                          cwd=ROOT)


@pytest.fixture(scope="module")
def jobmanager() -> Iterator[dict]:
    from kindling.local.ports import free_port

    home = Path(tempfile.mkdtemp(prefix="kindling-jdbc-secrets-"))
    port = free_port()
    started = _kindling("cluster", "start", "--port", str(port), "--home", str(home), timeout=120)
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        yield {"url": f"http://127.0.0.1:{port}", "address": f"127.0.0.1:{port}", "home": home}
    finally:
        _kindling("cluster", "stop", "--home", str(home), timeout=120)
        shutil.rmtree(home, ignore_errors=True)


def test_the_password_stays_out_of_the_rest_api_and_the_logs(postgres, jobmanager, tmp_path):
    import httpx

    from kindling.local.ports import wait_until

    password = postgres.password
    source, target = table_name("secret_src"), table_name("secret_out")
    execute(postgres, f"CREATE TABLE {source} (id BIGINT, name VARCHAR(10))",
            f"INSERT INTO {source} SELECT i, 'n' || i FROM generate_series(1, 20) AS i",
            f"CREATE TABLE {target} (id BIGINT PRIMARY KEY, name VARCHAR(10))")
    script = tmp_path / "secret_job.sql"
    script.write_text(
        f"CREATE TABLE src (id BIGINT, name STRING) WITH ({with_options(postgres, source)});\n"
        f"CREATE TABLE out_t (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ({with_options(postgres, target)});\n"
        "INSERT INTO out_t SELECT id, name FROM src;\n")
    submitted = _kindling("run", "-d", "-m", jobmanager["address"], "-D", "kindling.log.level=DEBUG", str(script))
    assert submitted.returncode == 0 and password not in submitted.stdout + submitted.stderr, submitted.stderr[-2000:]
    jid = re.search(r"JobID ([0-9a-f]{32})", submitted.stdout).group(1)
    with httpx.Client(base_url=jobmanager["url"], timeout=30) as http:
        def finished() -> bool:
            state = http.get(f"/jobs/{jid}").json()["state"]
            assert state not in ("FAILED", "CANCELED"), http.get(f"/jobs/{jid}/exceptions").text
            return state == "FINISHED"

        wait_until(finished, 600, f"job {jid} to finish", interval=0.5)
        answers = {route: http.get(route) for route in (
            f"/jobs/{jid}", f"/jobs/{jid}/exceptions", f"/jobs/{jid}/checkpoints", f"/jobs/{jid}/checkpoints/config",
            f"/jobs/{jid}/metrics", f"/kindling/jobs/{jid}/timeline", f"/kindling/jobs/{jid}/sink-contents",
            "/jobs/overview", "/jobmanager/config", "/jobmanager/environment", "/taskmanagers", "/metrics")}
    assert answers[f"/jobs/{jid}"].status_code == 200
    leaked = [route for route, answer in answers.items() if password in answer.text]
    assert leaked == []
    logs = [p for p in jobmanager["home"].rglob("*.log")]
    assert any(p.name == "driver.log" for p in logs), logs
    assert [str(p) for p in logs if password in p.read_text(errors="replace")] == []
    from jdbc_helpers import rows

    assert len(rows(postgres, f"SELECT id FROM {target}")) == 20  # the job did run, logging at DEBUG


def test_the_password_stays_out_of_explain_and_exceptions(env, postgres, monkeypatch):
    from kindling.connectors.jdbc import sink
    from kindling.connectors.jdbc.dialects import JdbcError
    from kindling.connectors.jdbc.options import jdbc_config

    password = postgres.password
    target = table_name("secret")
    execute(postgres, f"CREATE TABLE {target} (id BIGINT PRIMARY KEY, name VARCHAR(3))", f"INSERT INTO {target} VALUES (1, 'a')")
    # the password also in the URL (a JDBC URL may carry it as a parameter)
    in_url = {**postgres.options(), "url": f"{postgres.url}?password={password}"}
    options = ", ".join(f"'{k}' = '{v}'" for k, v in {"connector": "jdbc", **in_url, "table-name": target}.items())
    env.execute_sql(f"CREATE TABLE secret_t (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED) WITH ({options})")
    env.execute_sql("CREATE TABLE one_row (id BIGINT, name STRING) WITH ('connector' = 'collection', 'data' = '[[2, \"b\"]]')")
    plans = [env.execute_sql(f"EXPLAIN {q}").collect()[0][0] for q in (
        "INSERT INTO secret_t SELECT id, name FROM one_row", "SELECT id, name FROM secret_t WHERE id > 0")]
    assert all(plan and password not in plan for plan in plans), plans
    # Spark's own plan (its UI, its logs) lists the data source's options: kindling's session redacts them
    spark_plan = env.sql_session()._plan("SELECT id, name FROM secret_t", 1, "test").df._jdf.queryExecution().toString()
    assert "password" in spark_plan and "(redacted)" in spark_plan and password not in spark_plan, spark_plan[-3000:]
    assert [r["id"] for r in collect(env, "SELECT id FROM secret_t")] == [1]

    errors = []
    for bad in ({**in_url, "password": "x" + password, "url": f"{postgres.url}?password=x{password}"},  # failed login
                {**in_url, "table-name": "no_such_table"}):
        with pytest.raises(JdbcError) as error:
            sink.check_table(jdbc_config({**bad, "table-name": bad.get("table-name", target)}), _schema())
        errors.append(str(error.value))
    config = jdbc_config({**in_url, "table-name": target, "sink.max-retries": "0", "kindling.table.primary-key": "id"})
    import pyarrow as pa

    sink.check_table(config, _schema())
    with pytest.raises(JdbcError) as error:  # the database refuses the value: the commit fails
        sink.commit_batch(config, f"{target}@t", 0, pa.table({"id": pa.array([3], pa.int64()), "name": ["toolong"]}),
                          ["id", "name"])
    errors.append(str(error.value))
    assert "cannot log in" in errors[0] and "does not exist" in errors[1] and "value too long" in errors[2], errors
    assert [e for e in errors if password in e] == []
    assert "password=******" in errors[2]


def _schema():
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    return StructType([StructField("id", LongType()), StructField("name", StringType())])
