"""``kindling demo spend-report``: Flink's table walkthrough on local Kafka and MariaDB, checked at the end.

A generator writes transactions (account 1-5, an amount, a transaction time advancing one minute
per transaction, so about a dozen per account and hour) as CSV to the Kafka topic ``transactions``
at a steady rate, as the walkthrough's generator does. The job, ``examples/spend_report/spend_report.sql``
(or, with ``--table-api``, the same job as a PyFlink Table API program, ``spend_report.py``), keeps
``SUM(amount)`` per account and hour (``FLOOR(transaction_time TO HOUR)``) in the MariaDB table ``spend_report``
(primary key account and hour) through the ``jdbc`` sink, which upserts each changed hour. While it runs
the demo prints the report's latest rows; at the end it stops the generator, waits for the table to match
every transaction sent, and prints ``accounts=<n> hours=<n> wrong=<n>``.
"""

from __future__ import annotations

import random
import shutil
import string
import sys
import tempfile
import threading
import time
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Optional, TextIO

ACCOUNTS = (1, 2, 3, 4, 5)
START = datetime(2024, 1, 1)
SQL_FILE = Path(__file__).resolve().parents[2] / "examples" / "spend_report" / "spend_report.sql"
TABLE_API_FILE = SQL_FILE.with_suffix(".py")
MYSQL_TABLE = ("CREATE TABLE IF NOT EXISTS spend_report (account_id BIGINT NOT NULL, log_ts DATETIME(3) NOT NULL, "
               "amount BIGINT, PRIMARY KEY (account_id, log_ts))")


class TransactionGenerator:
    """CSV transactions to Kafka in a background thread; remembers the expected report."""

    def __init__(self, bootstrap_servers: str, topic: str = "transactions", rate: float = 50.0, seed: int = 7) -> None:
        self.bootstrap_servers, self.topic, self.rate = bootstrap_servers, topic, rate
        self.random = random.Random(seed)
        self.sent = 0
        self.expected: dict[tuple[int, datetime], int] = defaultdict(int)
        self.error: Optional[BaseException] = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def transaction(self, index: int) -> tuple[int, int, datetime]:
        """The ``index``-th transaction: accounts in turn, amounts 1..1000, one minute apart."""
        return ACCOUNTS[index % len(ACCOUNTS)], self.random.randint(1, 1000), START + timedelta(minutes=index)

    def start(self) -> "TransactionGenerator":
        self._thread.start()
        return self

    def _run(self) -> None:
        from confluent_kafka import Producer

        try:
            producer = Producer({"bootstrap.servers": self.bootstrap_servers, "linger.ms": 5})
            began = time.monotonic()
            while not self._stop.is_set():
                lag = began + self.sent / self.rate - time.monotonic()
                if lag > 0 and self._stop.wait(lag):
                    break
                account, amount, moment = self.transaction(self.sent)
                line = f"{account},{amount},{moment.strftime('%Y-%m-%d %H:%M:%S.%f')[:-3]}"
                producer.produce(self.topic, line.encode(), partition=self.sent % 2)
                producer.poll(0)
                self.expected[(account, moment.replace(minute=0, second=0, microsecond=0))] += amount
                self.sent += 1
            if producer.flush(30):
                raise RuntimeError("transactions were not acknowledged by the broker")
        except BaseException as exc:  # reported by the demo
            self.error = exc

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(30)


def report(mysql) -> dict[tuple[int, datetime], int]:
    """The ``spend_report`` table as {(account, hour): amount}."""
    connection = mysql.connect()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT account_id, log_ts, amount FROM spend_report")
            return {(int(a), ts.replace(microsecond=0)): int(amount) for a, ts, amount in cursor.fetchall()}
    finally:
        connection.close()


def wrong_rows(expected: dict, actual: dict) -> int:
    """Report rows that are missing, extra or hold another amount."""
    return sum(1 for key in set(expected) | set(actual) if expected.get(key) != actual.get(key))


def job_sql(bootstrap_servers: str, mysql) -> str:
    """The shipped SQL file with this run's servers and credentials in place of its placeholders."""
    return string.Template(SQL_FILE.read_text()).safe_substitute(
        KAFKA_BOOTSTRAP_SERVERS=bootstrap_servers, MYSQL_URL=mysql.url, MYSQL_USER=mysql.user, MYSQL_PASSWORD=mysql.password)


def table_api_program() -> Any:
    """The shipped Table API program (``spend_report.py``) as a module, its ``pyflink`` imports resolved to kindling."""
    from kindling.program import load_program

    return load_program(TABLE_API_FILE, "kindling_spend_report_program")


def run_spend_report_demo(duration: float = 60.0, rate: float = 50.0, out: TextIO = sys.stdout,
                          settle_timeout: float = 300.0, table_api: bool = False) -> int:
    """Run the playground for ``duration`` seconds of input, check the report, return the exit status; with
    ``table_api`` the job is the Table API program instead of the SQL file."""
    from kindling.env import StreamEnvironment
    from kindling.local.kafka import LocalKafka
    from kindling.local.mysql import LocalMySQL

    workdir = Path(tempfile.mkdtemp(prefix="kindling-spend-report-"))
    broker = LocalKafka(data_dir=workdir / "kafka")
    mysql = LocalMySQL()
    generator: Optional[TransactionGenerator] = None
    job = None
    expected: dict = {}
    actual: dict = {}
    failed = False
    try:
        job_form = "Table API program" if table_api else "SQL file"
        print(f"kindling demo: spend report ({rate:.0f} transactions/s for {duration:.0f} s; the {job_form})", file=out, flush=True)
        broker.start()
        broker.create_topic("transactions", partitions=2)
        mysql.start()
        connection = mysql.connect()
        with connection.cursor() as cursor:
            cursor.execute(MYSQL_TABLE)
        connection.commit()
        connection.close()
        print(f"  Kafka on {broker.bootstrap_servers}; MariaDB at {mysql.url} (table spend_report)", file=out, flush=True)
        generator = TransactionGenerator(broker.bootstrap_servers, rate=rate).start()
        env = StreamEnvironment({"state.checkpoints.dir": str(workdir / "checkpoints"), "execution.checkpointing.interval": "1 s",
                                 "parallelism.default": 2, "kindling.log.level": "ERROR",
                                 "restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": 5})
        result = None
        if table_api:  # examples/spend_report/spend_report.py: the walkthrough's report() in PyFlink's Table API
            from kindling.table import StreamTableEnvironment

            program = table_api_program()
            t_env = StreamTableEnvironment.create(env)
            program.create_tables(t_env, broker.bootstrap_servers, mysql.url, mysql.user, mysql.password)
            result = program.report(t_env.from_path("transactions")).execute_insert("spend_report")
        else:
            for statement in _statements(job_sql(broker.bootstrap_servers, mysql)):
                result = env.execute_sql(statement)
        assert result is not None
        job = result.get_job_client()
        print(f"  job '{job.job_name}' is {job.get_job_status()}", file=out, flush=True)
        deadline = time.monotonic() + duration
        last_print = 0.0
        while time.monotonic() < deadline:
            status = job.wait(timeout=min(2.0, max(0.0, deadline - time.monotonic())))
            if status in ("FAILED", "CANCELED", "FINISHED"):
                raise RuntimeError(f"the job ended early: {status}")
            if generator.error is not None:
                raise RuntimeError(f"transaction generator failed: {generator.error}")
            if time.monotonic() - last_print >= 5:
                last_print = time.monotonic()
                _print_report(report(mysql), generator.sent, out)
        generator.stop()
        expected = dict(generator.expected)
        print(f"  generator stopped after {generator.sent} transactions; waiting for the report to catch up ...", file=out, flush=True)
        settle = time.monotonic() + settle_timeout
        while True:
            actual = report(mysql)
            if wrong_rows(expected, actual) == 0 or time.monotonic() > settle:
                break
            if job.wait(timeout=1.0) in ("FAILED", "CANCELED", "FINISHED"):
                break
        _print_report(actual, generator.sent, out)
    except KeyboardInterrupt:
        print("  interrupted", file=out, flush=True)
        failed = True
    except Exception as exc:
        print(f"  demo failed: {exc}", file=out, flush=True)
        failed = True
    finally:
        if job is not None:
            job.cancel()
        if generator is not None:
            generator.stop()
        mysql.stop()
        broker.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    wrong = wrong_rows(expected, actual) if expected else 1
    accounts = len({a for a, _ in actual})
    hours = len({h for _, h in actual})
    print(f"accounts={accounts} hours={hours} wrong={wrong}", file=out, flush=True)
    return 0 if not failed and expected and wrong == 0 else 1


def _statements(script: str) -> list[str]:
    """The script's statements (comment lines dropped, split at semicolons)."""
    lines = [line for line in script.splitlines() if not line.strip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def _print_report(rows: dict, sent: int, out: TextIO) -> None:
    latest = sorted(rows.items(), key=lambda item: (item[0][1], item[0][0]))[-5:]
    shown = "  ".join(f"{a}@{h:%m-%d %H:00}={amount}" for (a, h), amount in latest)
    print(f"  sent={sent} report rows={len(rows)} latest: {shown}", file=out, flush=True)
