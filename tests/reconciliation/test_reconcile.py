"""Reconciliation of streaming SQL jobs (Kafka -> window TVF -> files) against a batch run of the same script."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from confluent_kafka import Producer

from kindling.env import StreamEnvironment
from kindling.reconciliation import reconcile
from kindling.reconciliation.checkpoint import QueryCheckpoint
from kindling.reconciliation.report import dumps

pytestmark = pytest.mark.integration

SCRIPT = """\
CREATE TABLE clicks (ts TIMESTAMP(3), page STRING, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH (
  'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{servers}',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json');
{sink}
"""
WINDOW_COUNTS = """
INSERT INTO page_counts
SELECT window_start, window_end, page, COUNT(*) FROM TABLE(TUMBLE(TABLE clicks, DESCRIPTOR(ts), INTERVAL '10' SECOND))
GROUP BY window_start, window_end, page;"""


FILE_SINK = """\
CREATE TABLE page_counts (window_start TIMESTAMP(3), window_end TIMESTAMP(3), page STRING, clicks BIGINT) WITH (
  'connector' = 'filesystem', 'path' = '{out}', 'format' = 'json', 'sink.rolling-policy.rollover-interval' = '1 ms');""" + WINDOW_COUNTS
KAFKA_SINK = """\
CREATE TABLE page_counts (window_start TIMESTAMP(3), window_end TIMESTAMP(3), page STRING, clicks BIGINT) WITH (
  'connector' = 'kafka', 'topic' = '{out}', 'properties.bootstrap.servers' = '{servers}', 'format' = 'json',
  'sink.delivery-guarantee' = 'exactly-once', 'sink.transactional-id-prefix' = 'reconcile-{out}');""" + WINDOW_COUNTS
UPSERT_TOTALS = """\
CREATE TABLE page_totals (page STRING, clicks BIGINT, last_click TIMESTAMP(3), PRIMARY KEY (page) NOT ENFORCED) WITH (
  'connector' = 'upsert-kafka', 'topic' = '{out}', 'properties.bootstrap.servers' = '{servers}', 'key.format' = 'json',
  'value.format' = 'json');
INSERT INTO page_totals SELECT page, COUNT(*), MAX(ts) FROM clicks GROUP BY page;"""


def _clicks(seconds, page=None) -> list[tuple[str, str]]:
    return [(f"2024-01-01 00:{s // 60:02d}:{s % 60:02d}", page or f"p{s % 3}") for s in seconds]


EPOCH_MS = 1704067200000  # 2024-01-01 00:00:00 UTC
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _example(path: str, replacements: tuple[tuple[str, str], ...]) -> str:
    """A playground file of examples/ with its servers and names replaced (each placeholder must be there)."""
    text = (EXAMPLES / path).read_text()
    for placeholder, value in replacements:
        assert placeholder in text, (path, placeholder)
        text = text.replace(placeholder, value)
    return text


class ClickJob:
    """The script above, run as a streaming job on the test session, fed in phases."""

    def __init__(self, spark, kafka, topic: str, tmp: Path, sink: str = FILE_SINK, out: str = "", table: str = "page_counts",
                 script: str = "") -> None:
        self.spark, self.kafka, self.topic, self.table = spark, kafka, topic, table
        self.out = tmp / "out"
        self.script = tmp / "clicks.sql"
        servers = kafka.bootstrap_servers
        sink_ddl = sink.format(out=out or self.out, servers=servers)
        self.script.write_text(script or SCRIPT.format(topic=topic, servers=servers, sink=sink_ddl))
        self.defines = {"execution.checkpointing.interval": "100 ms", "state.checkpoints.dir": str(tmp / "checkpoints")}
        self.producer = Producer({"bootstrap.servers": kafka.bootstrap_servers, "linger.ms": 5})
        self.sent = 0
        self.client = None

    @property
    def checkpoint(self) -> Path:
        return Path(self.defines["state.checkpoints.dir"]) / f"insert-into_{self.table}" / self.table

    def send(self, clicks: list[tuple[str, str]]) -> None:
        self.send_values([json.dumps({"ts": ts, "page": page}).encode() for ts, page in clicks])

    def send_values(self, values: list[bytes]) -> None:
        for i, value in enumerate(values):
            self.producer.produce(self.topic, value, partition=(self.sent + i) % 4)
        assert self.producer.flush(30) == 0
        self.sent += len(values)

    def start(self) -> None:
        env = StreamEnvironment(dict(self.defines), spark=self.spark)
        result = env.sql_session().execute_script(self.script.read_text())[-1]
        self.client = result.get_job_client()

    def wait_for_watermark(self, watermark_s: int, timeout: float = 240) -> int:
        """Until a committed micro-batch ran with a watermark of at least 00:00:00 + ``watermark_s``; returns its id.

        The Kafka source keeps its partitions aligned (no partition reads past the others' event time), so
        the watermark, not a record count, says how far the job has come."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.checkpoint.is_dir() and (self.checkpoint / "commits").is_dir():
                checkpoint = QueryCheckpoint(self.checkpoint)
                committed = checkpoint.committed()
                if committed:
                    if checkpoint.micro_batch(committed[-1]).watermark_ms >= EPOCH_MS + watermark_s * 1000:
                        return committed[-1]
            assert self.client is None or self.client.get_job_status() == "RUNNING", self.client.get_job_status()
            time.sleep(0.2)
        raise AssertionError(f"the job's watermark did not reach 00:00:{watermark_s} within {timeout} s")

    def wait_for_records(self, timeout: float = 240) -> int:
        """Until a committed micro-batch has read every record sent (a source without event time); returns its id."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if (self.checkpoint / "commits").is_dir():
                checkpoint = QueryCheckpoint(self.checkpoint)
                committed = checkpoint.committed()
                ends = checkpoint.micro_batch(committed[-1]).ends if committed else ()
                if sum(sum(parts.values()) for end in ends if end for parts in end["partitions"].values()) >= self.sent:
                    return committed[-1]
            assert self.client is None or self.client.get_job_status() == "RUNNING", self.client.get_job_status()
            time.sleep(0.2)
        raise AssertionError(f"the job did not read the {self.sent} records sent within {timeout} s")

    def stop(self) -> None:
        if self.client is not None:
            self.client.cancel()
            self.client = None

    def reconcile(self, **kwargs):
        return reconcile(str(self.script), defines=self.defines, spark=self.spark, **kwargs)


@pytest.fixture
def job(spark, kafka, topic, tmp_path):
    job = ClickJob(spark, kafka, topic, tmp_path)
    yield job
    job.stop()


def test_a_clean_run_matches_and_a_tampered_sink_is_reported_by_category(job, tmp_path):
    job.send(_clicks(range(0, 45)))
    job.start()
    job.wait_for_watermark(40)  # partition 1 holds 00:00:41 (the others wait for it)
    job.send(_clicks(range(45, 60)))  # partition 0 ends at 56 s: the watermark reaches 55 s, windows up to 50 s close
    job.wait_for_watermark(watermark_s=55)
    job.stop()

    report = job.reconcile()
    sink = report.sinks[0]
    assert report.full_match, str(report)
    assert report.exit_code == 0
    assert sink.comparison.key == ["window_start", "window_end", "page"]
    assert sink.comparison.matched == 15  # 5 closed windows x 3 pages
    assert sink.open_windows == 3  # [50 s, 60 s) is still open at the checkpoint's watermark
    assert sink.late_rows == 0

    files = sorted(f for f in job.out.rglob("*") if f.is_file() and not any(p.startswith(".") for p in f.relative_to(job.out).parts))
    rows = [json.loads(line) for f in files for line in f.read_text().splitlines() if line.strip()]
    assert len(rows) >= 3  # the rest is in a file committed to the checkpoint but not yet rolled into view
    assert any("not yet rolled into view" in note for note in sink.notes) == (len(rows) < 15)
    deleted, changed, duplicated = rows[0], rows[1], rows[2]
    for f in files:
        f.unlink()
    tampered = [dict(changed, clicks=changed["clicks"] + 100)] + [r for r in rows[2:]] + [duplicated]
    (job.out / "part-tampered.json").write_text("".join(json.dumps(r) + "\n" for r in tampered))

    report = job.reconcile()
    comparison = report.sinks[0].comparison
    assert report.exit_code == 1
    text = str(report)
    assert "MISMATCH" in text
    assert comparison.matched == 13
    assert [(r[0].strftime("%H:%M:%S"), r[2]) for r in comparison.missing] == [(deleted["window_start"][-8:], deleted["page"])]
    assert len(comparison.extra) == 1 and comparison.extra[0][2] == duplicated["page"]
    (stream_row, batch_row), = comparison.differing
    assert stream_row[3] == batch_row[3] + 100 and stream_row[2] == changed["page"]
    assert f"clicks: stream {changed['clicks'] + 100} / batch {changed['clicks']}" in text
    assert report.exit_code == 1
    machine = json.loads(dumps(report, str(tmp_path / "report.json")))
    assert machine["result"] == "MISMATCH"
    assert len(machine["sinks"][0]["missing"]) == 1 and machine["sinks"][0]["missing"][0]["page"] == deleted["page"]
    assert json.loads((tmp_path / "report.json").read_text()) == machine


def test_rows_dropped_as_late_are_reported_apart_from_mismatches(job):
    job.send(_clicks(range(0, 35)))
    job.start()
    job.wait_for_watermark(watermark_s=30)
    # Late for windows that had closed ([0, 10) and [10, 20)): the streaming job drops them. 00:00:31 is out
    # of order but its window [30, 40) is still open, so it counts.
    job.send(_clicks([1, 2, 15], page="late") + _clicks([31], page="p0") + _clicks(range(35, 50)))
    job.wait_for_watermark(watermark_s=45)
    job.send(_clicks(range(50, 55)))
    job.wait_for_watermark(watermark_s=50)
    job.stop()

    report = job.reconcile()
    sink = report.sinks[0]
    assert report.full_match, str(report)
    assert sink.late_rows == 3
    assert sorted(e["ts"].second for e in sink.late_examples) == [1, 2, 15]
    assert {e["page"] for e in sink.late_examples} == {"late"}
    assert "dropped late:   3" in str(report)


def test_the_command_line_prints_the_report_writes_json_and_exits_0_on_a_match(job, tmp_path, capsys):
    from kindling.cli import main
    from kindling.server.store import JobRecord, JobStore

    jid = "0123456789abcdef0123456789abcdef"
    directory = tmp_path / "jobmanager" / "jobs" / jid  # where a job manager's job keeps its checkpoints
    job.defines["state.checkpoints.dir"] = str(directory / "checkpoints")
    job.send(_clicks(range(0, 30)))
    job.start()
    job.wait_for_watermark(25)
    job.stop()
    defines = [arg for key, value in job.defines.items() for arg in ("-D", f"{key}={value}")]
    output = tmp_path / "report.json"
    code = main(["reconcile", "--sql", str(job.script), *defines, "--output", str(output)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "Reconciliation of job 'insert-into_page_counts': MATCH" in printed
    assert "Sink page_counts (connector 'filesystem')" in printed
    assert "matched rows:   6" in printed  # windows [0, 10) and [10, 20), 3 pages each
    assert json.loads(output.read_text())["sinks"][0]["matched"] == 6
    assert main(["reconcile", "--sql", str(job.script), *defines, "no-such-job"]) == 2
    assert "the script has no job named 'no-such-job'" in capsys.readouterr().err

    JobStore(tmp_path / "jobmanager").add(JobRecord(jid=jid, name="clicks", kind="sql", file="clicks.sql",
                                                    args=["-D", "execution.checkpointing.interval=100 ms"], cwd=str(tmp_path),
                                                    directory=str(directory)))
    assert main(["reconcile", jid, "--home", str(tmp_path / "jobmanager")]) == 0
    assert "matched rows:   6" in capsys.readouterr().out


CLICKS_PROGRAM = """\
\"\"\"Clicks per page and 10-second window with PyFlink's Table API; the tables are the SQL script's (argument 1).\"\"\"
import sys

from pyflink.table import EnvironmentSettings, TableEnvironment
from pyflink.table.expressions import col, lit
from pyflink.table.window import Tumble


def pipeline(t_env, ddl_file):
    for statement in open(ddl_file).read().split(";"):
        if statement.strip().startswith("CREATE"):
            t_env.execute_sql(statement)
    return (t_env.from_path("clicks")
            .window(Tumble.over(lit(10).seconds).on(col("ts")).alias("w"))
            .group_by(col("w"), col("page"))
            .select(col("w").start, col("w").end, col("page"), col("page").count)
            .execute_insert("page_counts"))


if __name__ == "__main__":
    pipeline(TableEnvironment.create(EnvironmentSettings.in_streaming_mode()), sys.argv[1]).wait()
"""


def test_a_table_api_program_is_reconciled_by_running_it_again_in_batch_mode(spark, kafka, topic, tmp_path, capsys):
    import runpy

    import kindling.pyflink_compat  # noqa: F401  (pyflink imports resolve to kindling, as `kindling run` has them)
    from kindling.cli import main
    from kindling.reconciliation import ReconcileError, reconcile_program
    from kindling.server.store import JobRecord, JobStore
    from kindling.table import StreamTableEnvironment

    jid = "fedcba9876543210fedcba9876543210"
    directory = tmp_path / "jobmanager" / "jobs" / jid  # where a job manager's job keeps its checkpoints
    job = ClickJob(spark, kafka, topic, tmp_path)
    job.defines["state.checkpoints.dir"] = str(directory / "checkpoints")
    program = tmp_path / "clicks_program.py"
    program.write_text(CLICKS_PROGRAM)
    pipeline = runpy.run_path(str(program), run_name="clicks_program")["pipeline"]
    job.send(_clicks(range(0, 30)))
    try:  # the streaming run: the program's pipeline on an environment with the job's options (as `kindling run -D` gives)
        job.client = pipeline(StreamTableEnvironment.create(StreamEnvironment(dict(job.defines), spark=spark)),
                              str(job.script)).get_job_client()
        job.wait_for_watermark(25)
    finally:
        job.stop()
    defines = [arg for key, value in job.defines.items() for arg in ("-D", f"{key}={value}")]
    output = tmp_path / "report.json"
    code = main(["reconcile", "--python", str(program), *defines, "--output", str(output), "--args", str(job.script)])
    printed = capsys.readouterr().out
    assert code == 0, printed
    assert "Reconciliation of job 'insert-into_page_counts': MATCH" in printed
    assert "matched rows:   6" in printed  # windows [0, 10) and [10, 20), 3 pages each; [20, 30) is open
    assert json.loads(output.read_text())["sinks"][0]["open_windows"] == 3

    # A job manager's Python job: its program, arguments and options as submitted; a row added outside kindling is extra.
    JobStore(tmp_path / "jobmanager").add(JobRecord(jid=jid, name="clicks", kind="python", file=program.name, args=[str(job.script)],
                                                    cwd=str(tmp_path), directory=str(directory),
                                                    configuration={"execution.checkpointing.interval": "100 ms"}))
    (job.out / "part-added.json").write_text(json.dumps({"window_start": "2024-01-01 00:00:00", "window_end": "2024-01-01 00:00:10",
                                                         "page": "p9", "clicks": 1}) + "\n")
    assert main(["reconcile", jid, "--home", str(tmp_path / "jobmanager")]) == 1
    printed = capsys.readouterr().out
    assert "MISMATCH" in printed and "extra rows:     1" in printed, printed

    datastream = tmp_path / "datastream_program.py"
    datastream.write_text("from pyflink.datastream import StreamExecutionEnvironment\n"
                          "env = StreamExecutionEnvironment.get_execution_environment()\n"
                          "env.from_collection([1, 2, 3]).print()\nenv.execute('numbers')\n")
    with pytest.raises(ReconcileError, match=r"from_collection: a DataStream pipeline cannot be re-run for reconciliation"):
        reconcile_program(str(datastream))


def test_a_running_job_is_reconciled_at_its_last_checkpoint(job):
    job.send(_clicks(range(0, 40)))
    job.start()
    first = job.wait_for_watermark(35)
    job.send(_clicks(range(40, 80)))
    report = job.reconcile()  # the job keeps reading and committing meanwhile
    assert report.full_match, str(report)
    assert report.sinks[0].batch_id >= first
    job.wait_for_watermark(watermark_s=75)
    report = job.reconcile()
    assert report.full_match, str(report)
    assert report.sinks[0].comparison.matched == 21  # windows [0, 70) closed: 7 x 3 pages


@pytest.fixture
def kafka_job(spark, kafka, topic, tmp_path):
    """The click job writing its windows into an exactly-once Kafka topic of its own."""
    out = f"{topic}-out"
    kafka.create_topic(out, partitions=2)
    job = ClickJob(spark, kafka, topic, tmp_path, sink=KAFKA_SINK, out=out)
    yield job
    job.stop()
    kafka.delete_topic(out)


def test_a_running_kafka_to_kafka_job_is_compared_up_to_its_output_at_the_checkpoint(kafka_job, monkeypatch):
    """The exactly-once sink's topic is read up to its cut at the checkpoint's micro-batch: the job commits more windows
    while the batch run is compared (here before the topic is read back), and they are not counted as extra rows."""
    import kindling.reconciliation as reconciliation

    job = kafka_job
    read_back = reconciliation.committed_rows

    def after_more_output(*args, **kwargs):
        job.send(_clicks(range(40, 80)))
        job.wait_for_watermark(75)  # windows [30, 70) are in the topic now, after the micro-batch compared
        return read_back(*args, **kwargs)

    job.send(_clicks(range(0, 40)))
    job.start()
    first = job.wait_for_watermark(35)
    monkeypatch.setattr(reconciliation, "committed_rows", after_more_output)
    report = job.reconcile()
    sink = report.sinks[0]
    assert report.full_match, str(report)
    assert sink.batch_id >= first and not sink.notes, sink.notes
    assert sink.comparison.matched == 9  # windows [0, 30) closed at the compared batch's watermark (00:00:35-00:00:38)


def test_a_job_stopped_and_resumed_three_times_matches_kafka_to_kafka(kafka_job):
    job = kafka_job
    for phase in range(4):  # started, then stopped mid-stream and resumed from its checkpoint three times
        job.send(_clicks(range(20 * phase, 20 * phase + 20)))
        job.start()
        job.wait_for_watermark(20 * phase + 15)
        job.stop()
    report = job.reconcile()
    sink = report.sinks[0]
    assert report.full_match, str(report)
    assert sink.connector == "kafka"
    assert sink.comparison.matched == 21  # windows [0, 70) closed: 7 x 3 pages, each written once


def test_a_driver_killed_three_times_mid_stream_and_restarted_matches(spark, kafka, topic, tmp_path):
    """The job runs as `kindling sql -f` in a driver process of its own; SIGKILL takes the driver and its JVM down
    while records keep arriving, and the next driver resumes from the checkpoint."""
    job = ClickJob(spark, kafka, topic, tmp_path)
    log = tmp_path / "driver.log"
    defines = [arg for key, value in job.defines.items() for arg in ("-D", f"{key}={value}")]
    command = [sys.executable, "-m", "kindling", "sql", "-f", str(job.script), *defines,
               "-D", "restart-strategy.type=fixed-delay", "-D", "restart-strategy.fixed-delay.attempts=20"]
    job.send(_clicks(range(0, 20)))
    for phase in range(1, 5):
        driver = subprocess.Popen(command, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True)
        try:
            job.wait_for_watermark(20 * phase - 5, timeout=300)
            job.send(_clicks(range(20 * phase, 20 * phase + 20)))  # the next records arrive; the driver dies among them
        finally:
            os.killpg(driver.pid, signal.SIGKILL)
            driver.wait(timeout=60)
    report = job.reconcile()
    assert report.full_match, str(report) + "\n" + log.read_text()[-3000:]
    sink = report.sinks[0]
    assert sink.comparison.matched >= 18  # at least windows [0, 60): 6 x 3 pages, each written once
    assert log.read_text().count("resumes from its earlier checkpoint") == 3


def test_an_updating_result_is_compared_by_its_final_value_per_key(spark, kafka, topic, tmp_path):
    out = f"{topic}-totals"
    kafka.create_topic(out, partitions=2)
    job = ClickJob(spark, kafka, topic, tmp_path, sink=UPSERT_TOTALS, out=out, table="page_totals")
    try:
        job.send(_clicks(range(0, 30)))
        job.start()
        job.wait_for_watermark(25)
        job.send(_clicks(range(30, 60)))  # every page's total is updated: the topic holds several records per key
        job.wait_for_watermark(55)
        job.stop()
        report = job.reconcile()
        assert report.full_match, str(report)
        sink = report.sinks[0]
        assert sink.connector == "upsert-kafka" and sink.comparison.key == ["page"]
        assert sink.comparison.matched == 3
        key = _first_key(kafka, out)
        producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
        producer.produce(out, key=key, value=None)  # the key deleted outside kindling
        assert producer.flush(30) == 0
        report = job.reconcile()
        assert not report.full_match
        assert [row[0] for row in report.sinks[0].comparison.missing] == [json.loads(key)["page"]]
    finally:
        job.stop()
        kafka.delete_topic(out)


def _first_key(kafka, topic: str) -> bytes:
    from confluent_kafka import Consumer

    consumer = Consumer({"bootstrap.servers": kafka.bootstrap_servers, "group.id": "reconcile-test", "auto.offset.reset": "earliest"})
    try:
        consumer.subscribe([topic])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            message = consumer.poll(1)
            if message is not None and not message.error():
                return message.key()
        raise AssertionError(f"no record in {topic}")
    finally:
        consumer.close()


DEBEZIUM_TOTALS = """\
CREATE TABLE page_totals (page STRING, clicks BIGINT) WITH (
  'connector' = 'kafka', 'topic' = '{out}', 'properties.bootstrap.servers' = '{servers}', 'format' = 'debezium-json');
INSERT INTO page_totals SELECT page, COUNT(*) FROM clicks GROUP BY page;"""


def test_an_updating_result_in_a_changelog_format_is_compared_by_the_rows_its_changes_leave(spark, kafka, topic, tmp_path):
    out = f"{topic}-changes"
    kafka.create_topic(out, partitions=1)
    job = ClickJob(spark, kafka, topic, tmp_path, sink=DEBEZIUM_TOTALS, out=out, table="page_totals")
    try:
        job.send(_clicks(range(0, 30)))
        job.start()
        job.wait_for_watermark(25)
        job.send(_clicks(range(30, 60)))  # every page's count changes: the topic holds deletes of the old rows
        job.wait_for_watermark(55)
        job.stop()
        report = job.reconcile()
        assert report.full_match, str(report)
        assert report.sinks[0].comparison.matched == 3
        rows = _rows_left(kafka, out)
        assert sorted(page for page, _ in rows) == ["p0", "p1", "p2"]
        page, clicks = rows[0]
        producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
        producer.produce(out, value=json.dumps({"before": {"page": page, "clicks": clicks}, "after": None, "op": "d"}).encode())
        assert producer.flush(30) == 0  # the row deleted outside kindling
        report = job.reconcile()
        assert not report.full_match, str(report)
        assert report.sinks[0].comparison.missing == [(page, clicks)]
    finally:
        job.stop()
        kafka.delete_topic(out)


def _rows_left(kafka, topic: str) -> list[tuple]:
    """The rows a topic of Debezium envelopes leaves (every create added, every delete removed), read by a plain consumer."""
    from collections import Counter

    from kindling.connectors.kafka.tail import TopicTail

    left: Counter = Counter()
    with TopicTail({"bootstrap.servers": kafka.bootstrap_servers}, [topic]) as tail:
        for message in tail.poll(2):
            envelope = json.loads(message.value())
            row = envelope["after"] or envelope["before"]
            left[(row["page"], row["clicks"])] += -1 if envelope["op"] == "d" else 1
    return sorted(+left)


def test_the_spend_report_playground_kafka_to_mysql_is_reconciled_by_key(spark, kafka, topic, mysql, tmp_path, monkeypatch):
    """examples/spend_report/spend_report.sql as it ships: transactions (CSV) -> hourly spend per account, upserted
    into MariaDB through the jdbc connector; its Table API twin, spend_report.py, re-run against the same job."""
    import kindling.reconciliation as reconciliation
    from kindling.reconciliation import reconcile_program

    table = f"spend_{topic.replace('-', '_')}"
    connection = mysql.connect()
    try:
        connection.cursor().execute(f"CREATE TABLE {table} (account_id BIGINT, log_ts DATETIME(3), amount BIGINT, "
                                    "PRIMARY KEY (account_id, log_ts))")
        connection.commit()
    finally:
        connection.close()
    options = mysql.options()
    script = _example("spend_report/spend_report.sql", (
        ("${KAFKA_BOOTSTRAP_SERVERS}", kafka.bootstrap_servers), ("${MYSQL_URL}", options["url"]),
        ("${MYSQL_USER}", options["username"]), ("${MYSQL_PASSWORD}", options["password"]),
        ("'topic' = 'transactions'", f"'topic' = '{topic}'"), ("'table-name' = 'spend_report'", f"'table-name' = '{table}'")))
    job = ClickJob(spark, kafka, topic, tmp_path, table="spend_report", script=script)

    def transactions(seconds: range) -> list[bytes]:  # 5 accounts, one transaction every 10 s, amounts 1..99
        return [f"{s // 10 % 5 + 1},{s * 7 % 99 + 1},2024-01-01 {s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}.000".encode()
                for s in seconds]

    try:
        job.send_values(transactions(range(0, 4000, 10)))
        job.start()
        job.wait_for_watermark(3900)
        read_back = reconciliation.committed_rows

        def after_more_output(*args, **kwargs):
            job.send_values(transactions(range(4000, 7200, 10)))  # the second hour's totals are updated row by row
            job.wait_for_watermark(7100)
            return read_back(*args, **kwargs)

        # Running, the job is compared at its last micro-batch with the table as it stood then (read between two
        # readings of the sink's commits table), although it has updated the second hour's totals since.
        monkeypatch.setattr(reconciliation, "committed_rows", after_more_output)
        report = job.reconcile()
        monkeypatch.setattr(reconciliation, "committed_rows", read_back)
        assert report.full_match and not report.sinks[0].notes, str(report)
        assert report.sinks[0].comparison.matched == 10  # 5 accounts x (the first hour, the second hour so far)
        job.stop()
        report = job.reconcile()
        sink = report.sinks[0]
        assert report.full_match, str(report)
        assert sink.connector == "jdbc" and sink.comparison.key == ["account_id", "log_ts"]
        assert sink.comparison.matched == 10  # 5 accounts x 2 hours
        # The Table API program writes the same job (insert-into_spend_report): re-run, it reconciles with the SQL job's output.
        (tmp_path / "spend_report.py").write_text(_example("spend_report/spend_report.py", (
            ("'topic' = 'transactions'", f"'topic' = '{topic}'"), ("'table-name' = 'spend_report'", f"'table-name' = '{table}'"))))
        for name, value in (("KAFKA_BOOTSTRAP_SERVERS", kafka.bootstrap_servers), ("MYSQL_URL", options["url"]),
                            ("MYSQL_USER", options["username"]), ("MYSQL_PASSWORD", options["password"])):
            monkeypatch.setenv(name, value)
        report = reconcile_program(str(tmp_path / "spend_report.py"), defines=job.defines)
        assert report.full_match, str(report)
        assert report.sinks[0].comparison.key == ["account_id", "log_ts"] and report.sinks[0].comparison.matched == 10
        connection = mysql.connect()
        try:
            connection.cursor().execute(f"UPDATE {table} SET amount = amount + 1 WHERE account_id = 3 AND log_ts = '2024-01-01 01:00:00'")
            connection.commit()
        finally:
            connection.close()
        report = job.reconcile()
        (stream_row, batch_row), = report.sinks[0].comparison.differing
        assert stream_row[0] == 3 and stream_row[2] == batch_row[2] + 1
    finally:
        job.stop()


def test_the_payments_playground_kafka_to_elasticsearch_is_reconciled(spark, kafka, topic, elasticsearch, tmp_path, monkeypatch):
    """examples/payments/payments.sql as it ships (a Python UDF, an updating GROUP BY, an elasticsearch-7 upsert sink), and
    its Table API twin payment_msg_processing.py re-run against the same job."""
    import shutil

    from elasticsearch import Elasticsearch

    from kindling.reconciliation import reconcile_program

    index = f"pay-{topic}"
    script = _example("payments/payments.sql", (
        ("'topic' = 'payment_msg'", f"'topic' = '{topic}'"), ("'127.0.0.1:9092'", f"'{kafka.bootstrap_servers}'"),
        ("'http://127.0.0.1:9200'", f"'{elasticsearch.url}'"), ("'index' = 'platform_pay_amount_1'", f"'index' = '{index}'")))
    shutil.copy(EXAMPLES / "payments" / "payment_udfs.py", tmp_path)  # beside the script, as the playground has it
    monkeypatch.syspath_prepend(str(tmp_path))
    job = ClickJob(spark, kafka, topic, tmp_path, table="es_sink", script=script)
    payments = [json.dumps({"createTime": f"2024-01-01 00:00:{i % 60:02d}", "orderId": i, "payAmount": round(i * 1.37 % 500, 2),
                            "payPlatform": i % 2, "provinceId": i % 7}).encode() for i in range(200)]
    try:
        job.send_values(payments[:120])
        job.start()
        job.wait_for_records()
        job.send_values(payments[120:])
        job.wait_for_records()
        job.stop()
        report = job.reconcile()
        sink = report.sinks[0]
        assert report.full_match, str(report)
        assert sink.connector == "elasticsearch-7" and sink.comparison.key == ["province"]
        assert sink.comparison.matched == 7
        (tmp_path / "payment_msg_processing.py").write_text(_example("payments/payment_msg_processing.py", (
            ("'topic' = 'payment_msg'", f"'topic' = '{topic}'"), ("'index' = 'platform_pay_amount_1'", f"'index' = '{index}'"))))
        monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", kafka.bootstrap_servers)
        monkeypatch.setenv("ELASTICSEARCH_HOSTS", elasticsearch.url)
        report = reconcile_program(str(tmp_path / "payment_msg_processing.py"), defines=job.defines)
        assert report.full_match and report.sinks[0].comparison.matched == 7, str(report)
        client = Elasticsearch(elasticsearch.url)
        client.delete(index=index, id="xizang", refresh=True)  # a document deleted outside kindling
        report = job.reconcile()
        assert [row[0] for row in report.sinks[0].comparison.missing] == ["xizang"]
    finally:
        job.stop()


def test_a_job_reading_files_as_they_arrive_matches(spark, kafka, topic, tmp_path):
    incoming = tmp_path / "incoming"
    incoming.mkdir()
    script = SCRIPT.replace("""'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{servers}',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json'""", f"""'connector' = 'filesystem', 'path' = '{incoming}', 'format' = 'json',
  'source.monitor-interval' = '100 ms'""")
    assert "'connector' = 'filesystem', 'path'" in script
    job = ClickJob(spark, kafka, topic, tmp_path, script=script.format(sink=FILE_SINK.format(out=tmp_path / "out")))

    def drop_file(name: str, seconds: range) -> None:  # written aside, then renamed in: the source sees whole files
        lines = "".join(json.dumps({"ts": ts, "page": page}) + "\n" for ts, page in _clicks(seconds))
        (tmp_path / name).write_text(lines)
        (tmp_path / name).rename(incoming / name)

    drop_file("a.json", range(0, 25))
    job.start()
    job.wait_for_watermark(23)
    drop_file("b.json", range(25, 50))
    job.wait_for_watermark(48)
    job.stop()
    report = job.reconcile()
    sink = report.sinks[0]
    assert report.full_match, str(report)
    assert sink.comparison.matched == 12  # windows [0, 40): 4 x 3 pages
    assert "(filesystem): " in sink.input_range["clicks"]


def test_a_job_reading_kinesis_shards_matches(spark, kafka, topic, kinesis, tmp_path):
    """A Kinesis source is read again shard range by shard range, as the streaming run's micro-batches read them."""
    stream = f"s-{topic}"
    kinesis.create_stream(stream, shards=2)
    aws = (f"'aws.region' = 'us-east-1', 'aws.endpoint' = '{kinesis.endpoint}', 'aws.credentials.provider' = 'BASIC', "
           "'aws.credentials.basic.accesskeyid' = 'kindling-local', 'aws.credentials.basic.secretkey' = 'kindling-local-secret'")
    script = SCRIPT.replace("""'connector' = 'kafka', 'topic' = '{topic}', 'properties.bootstrap.servers' = '{servers}',
  'scan.startup.mode' = 'earliest-offset', 'format' = 'json'""", f"""'connector' = 'kinesis', 'stream' = '{stream}', {aws},
  'scan.stream.initpos' = 'TRIM_HORIZON', 'scan.shard.getrecords.intervalmillis' = '50', 'format' = 'json'""")
    assert "'connector' = 'kinesis'" in script
    job = ClickJob(spark, kafka, topic, tmp_path, script=script.format(sink=FILE_SINK.format(out=tmp_path / "out")))
    client = kinesis.client()

    def put(seconds: range) -> None:  # a partition key per click: both shards get clicks of every second range
        records = [{"PartitionKey": f"k{ts}", "Data": json.dumps({"ts": ts, "page": page}).encode()} for ts, page in _clicks(seconds)]
        failed = client.put_records(StreamName=stream, Records=records).get("FailedRecordCount", 0)
        assert failed == 0

    put(range(0, 25))
    job.start()
    try:  # the watermark is the slowest shard's (Flink's per-shard watermarks): a second or two behind the last click
        job.wait_for_watermark(20)
        put(range(25, 50))
        job.wait_for_watermark(40)
    finally:
        job.stop()
    report = job.reconcile()
    sink = report.sinks[0]
    assert report.full_match, str(report)
    assert sink.comparison.matched == 12  # windows [0, 40): 4 x 3 pages
    assert "(kinesis): " in sink.input_range["clicks"]


def test_reconcile_names_what_it_cannot_do(spark, tmp_path):
    from kindling.reconciliation import ReconcileError

    script = tmp_path / "select.sql"
    script.write_text("CREATE TABLE t (x INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5');\nSELECT * FROM t;\n")
    with pytest.raises(ReconcileError, match="no INSERT INTO"):
        reconcile(str(script), spark=spark)
    script.write_text("CREATE TABLE t (x INT) WITH ('connector' = 'datagen', 'number-of-rows' = '5');\n"
                      "CREATE TABLE s (x INT) WITH ('connector' = 'blackhole');\nINSERT INTO s SELECT x FROM t;\n")
    with pytest.raises(ReconcileError, match="job 'insert-into_s' has no checkpoint"):
        reconcile(str(script), defines={"state.checkpoints.dir": str(tmp_path / "none")}, spark=spark)


def test_a_group_windows_end_is_found_in_the_plan_and_a_group_window_without_it_is_told(spark, tmp_path):
    """Open windows are told apart by their end: a group window's (TUMBLE_END, the Table API's w.end) is read from Spark's
    plan; a group window whose end the query does not write cannot be cut at a watermark (reconcile refuses it)."""
    from kindling.reconciliation import group_window_end

    env = StreamEnvironment({"execution.runtime-mode": "batch"}, spark=spark)
    session = env.sql_session()
    session.execute_sql("CREATE TABLE c (ts TIMESTAMP(3), page STRING, WATERMARK FOR ts AS ts) WITH ("
                        "'connector' = 'datagen', 'number-of-rows' = '10')")
    queries = {
        "SELECT TUMBLE_START(ts, INTERVAL '10' SECOND) AS s, TUMBLE_END(ts, INTERVAL '10' SECOND) AS e, page, COUNT(*) AS n "
        "FROM c GROUP BY TUMBLE(ts, INTERVAL '10' SECOND), page": ("e", True),
        "SELECT TUMBLE_START(ts, INTERVAL '10' SECOND) AS s, page, COUNT(*) AS n FROM c GROUP BY TUMBLE(ts, INTERVAL '10' SECOND), "
        "page": (None, True),
        "SELECT page, COUNT(*) AS n FROM c GROUP BY page": (None, False),
    }
    for query, expected in queries.items():
        assert group_window_end(session._plan(query, 1, "SELECT").df) == expected, query
