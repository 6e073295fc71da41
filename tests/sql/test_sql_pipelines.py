"""The three SQL pipelines of Flink's documentation and playgrounds, adapted to local servers.

* datagen -> print, through ``kindling sql -f`` (the command exits 0 when the bounded job ends)
* Kafka ``transactions`` (CSV, 5 s watermark) -> hourly TUMBLE spend report per account -> print
* Kafka ``payment_msg`` (JSON) -> Python UDF province id -> name -> GROUP BY sum -> upsert-kafka
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from kindling.sql.statements import split_statements

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "sql"
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "connectors" / "kafka"))
from kafka_helpers import produce, read_back  # noqa: E402


def _script(name: str, servers: str, topics: dict[str, str]) -> str:
    text = (EXAMPLES / name).read_text().replace("127.0.0.1:9092", servers)
    for old, new in topics.items():
        text = text.replace(f"'topic' = '{old}'", f"'topic' = '{new}'")
    return text


@pytest.mark.integration
def test_datagen_to_print_through_the_sql_command(tmp_path):
    command = [sys.executable, "-m", "kindling.cli", "sql", "-f", str(EXAMPLES / "datagen_print.sql"),
               "-D", f"state.checkpoints.dir={tmp_path / 'checkpoints'}", "-D", "parallelism.default=1"]
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable}
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    # The print sink writes from Spark's Python workers, whose output Spark forwards to the process's stderr.
    printed = [line for line in (done.stdout + done.stderr).splitlines() if line.startswith("+I[")]
    assert sorted(int(line[3:].split(",")[0]) for line in printed) == list(range(1, 11))
    assert "[INFO] SQL update statement has been successfully submitted" in done.stdout


def test_sql_command_reports_a_bad_script_and_exits_non_zero(tmp_path):
    script = tmp_path / "bad.sql"
    script.write_text("CREATE TABLE t (\n  a INT,\n  b STRNG\n) WITH ('connector' = 'print');\n")
    done = subprocess.run([sys.executable, "-m", "kindling.cli", "sql", "-f", str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert done.stderr.strip() == f"kindling: {script}: SQL line 3: unknown data type 'STRNG'; did you mean STRING?. Supported form: " + \
        "ARRAY, BIGINT, BINARY, BOOL, BOOLEAN, BYTES, CHAR, DATE, DEC, DECIMAL, DOUBLE, FLOAT, INT, INTEGER, MAP, MULTISET, NUMERIC, " \
        "REAL, ROW, SMALLINT, STRING, TIME, TIMESTAMP, TIMESTAMP_LTZ, TINYINT, VARBINARY, VARCHAR"


@pytest.mark.integration
def test_spend_report_hourly_tumble_over_kafka_csv(env, kafka, topic):
    rng = random.Random(7)
    start = datetime(2024, 1, 1)
    records, expected = [], defaultdict(int)
    for i in range(600):
        account = rng.randint(1, 5)
        amount = rng.randint(1, 1000)
        at = start + timedelta(seconds=i * 30 + rng.randint(0, 4))  # a little out of order, within the 5 s bound
        records.append((i % 4, f"{account},{amount},{at:%Y-%m-%d %H:%M:%S}.000".encode()))
        expected[(account, at.replace(minute=0, second=0))] += amount
    produce(kafka.bootstrap_servers, topic, records)
    statements = split_statements(_script("spend_report.sql", kafka.bootstrap_servers, {"transactions": topic}))
    for statement in statements[:-1]:
        env.sql_session().execute_statement(statement)
    report = env.execute_sql(
        "SELECT account_id, TUMBLE_START(transaction_time, INTERVAL '1' HOUR) AS log_ts, SUM(amount) AS amount\n"
        "FROM transactions GROUP BY account_id, TUMBLE(transaction_time, INTERVAL '1' HOUR)"
    )
    rows = report.final_rows(timeout=300)
    assert {(r.account_id, r.log_ts): r.amount for r in rows} == dict(expected)
    # The script's own INSERT (into print) plans onto the same query; datagen -> print covers running an INSERT.
    plan = env.execute_sql("EXPLAIN " + statements[-1].text).collect()[0][0]
    assert "Sink: spend_report (connector 'print')" in plan and "output mode: append" in plan


@pytest.mark.integration
def test_payment_msg_udf_group_by_into_upsert_kafka(env, kafka, topic, monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    from payment_udfs import PROVINCES

    rng = random.Random(11)
    records, expected = [], defaultdict(float)
    for order in range(300):
        province = rng.randrange(len(PROVINCES))
        amount = round(rng.uniform(1, 500), 2)
        message = {"createTime": f"2024-01-01 00:00:{order % 60:02d}", "orderId": order, "payAmount": amount,
                   "payPlatform": order % 2, "provinceId": province}
        records.append((order % 4, json.dumps(message).encode()))
        expected[PROVINCES[province]] += amount
    produce(kafka.bootstrap_servers, topic, records)
    out_topic = topic + "-pay"
    kafka.create_topic(out_topic, partitions=2)
    try:
        script = _script("payment_msg.sql", kafka.bootstrap_servers, {"payment_msg": topic, "province_pay": out_topic})
        result = env.sql_session().execute_script(script)[-1]
        assert result.wait(timeout=300) == "FINISHED"
        latest: dict[str, float] = {}
        for message in read_back(kafka.bootstrap_servers, out_topic, expected=len(expected), timeout=60):
            key = json.loads(message.key())["province"]
            if message.value() is None:
                latest.pop(key, None)
            else:
                value = json.loads(message.value())
                assert value["province"] == key
                latest[key] = value["pay_amount"]
        assert latest.keys() == expected.keys()
        for province, total in expected.items():
            assert latest[province] == pytest.approx(total)
    finally:
        kafka.delete_topic(out_topic)


@pytest.mark.integration
def test_statement_set_runs_several_inserts_as_one_job(env, kafka, topic):
    counts_topic = topic + "-counts"
    kafka.create_topic(counts_topic, partitions=1)
    servers = kafka.bootstrap_servers
    try:
        # Two queries start Python workers at once; on a loaded machine one may time out connecting
        # back to the JVM: the job then restarts from its checkpoint, as a Flink job would.
        results = env.sql_session().execute_script(f"""
SET 'restart-strategy.type' = 'fixed-delay';
SET 'restart-strategy.fixed-delay.attempts' = '3';
SET 'restart-strategy.fixed-delay.delay' = '1 s';
CREATE TABLE numbers (id BIGINT) WITH (
  'connector' = 'datagen', 'number-of-rows' = '50',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '50');
CREATE TABLE copies (id BIGINT, doubled BIGINT) WITH (
  'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{servers}', 'format' = 'json');
CREATE TABLE parity (odd BOOLEAN, n BIGINT, PRIMARY KEY (odd) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = '{counts_topic}', 'properties.bootstrap.servers' = '{servers}',
  'key.format' = 'json', 'value.format' = 'json');
EXECUTE STATEMENT SET BEGIN
  INSERT INTO copies SELECT id, id * 2 FROM numbers;
  INSERT INTO parity SELECT id % 2 = 1, COUNT(*) FROM numbers GROUP BY id % 2 = 1;
END;""")
        job = results[-1]
        assert len(job.get_job_client().plans) == 2
        assert job.wait(timeout=300) == "FINISHED"
        copies = [json.loads(m.value()) for m in read_back(servers, topic, expected=50)]
        # 'at-least-once' (the Kafka sink's default): a restart may repeat records, never lose one.
        assert sorted({(c["id"], c["doubled"]) for c in copies}) == [(i, 2 * i) for i in range(1, 51)]
        latest = {}
        for message in read_back(servers, counts_topic, expected=2):
            latest[json.loads(message.key())["odd"]] = json.loads(message.value())["n"]
        assert latest == {True: 25, False: 25}
    finally:
        kafka.delete_topic(counts_topic)
