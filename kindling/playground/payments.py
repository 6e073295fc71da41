"""``kindling demo payments``: Flink's PyFlink walkthrough (Kafka -> UDF -> SUM per province -> Elasticsearch).

A local Kafka broker and a local Elasticsearch API start on free loopback ports; a generator writes
``payment_msg`` JSON records (``createTime``, ``orderId``, ``payAmount``, ``payPlatform``, ``provinceId``) as
the walkthrough's generator does; ``examples/payments/payments.sql`` (or, with ``--table-api``, the
walkthrough's PyFlink Table API program ``payment_msg_processing.py``) runs with its ``province_id_to_name``
Python UDF and keeps the per-province totals in an ``elasticsearch-7`` index. The totals are read back from
the index while they change; at the end the index is checked against the generated payments and the run
prints ``provinces=<n> wrong=<n>`` (exit status 0 only if every province is right).
"""

from __future__ import annotations

import json
import random
import shutil
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Optional, TextIO

EXAMPLE_DIR = Path(__file__).resolve().parents[2] / "examples" / "payments"
TABLE_API_FILE = EXAMPLE_DIR / "payment_msg_processing.py"
INDEX = "platform_pay_amount_1"
TOPIC = "payment_msg"


class PaymentGenerator(threading.Thread):
    """The walkthrough's generator: random payments at ``rate`` per second; remembers the sum per province id."""

    def __init__(self, bootstrap_servers: str, rate: float, seed: Optional[int] = None) -> None:
        super().__init__(name="payment-generator", daemon=True)
        self.bootstrap_servers, self.rate = bootstrap_servers, rate
        self.random = random.Random(seed)
        self.totals: dict[int, float] = defaultdict(float)
        self.sent = 0
        self.error: Optional[BaseException] = None
        self._halt = threading.Event()

    def run(self) -> None:
        from confluent_kafka import Producer

        try:
            producer = Producer({"bootstrap.servers": self.bootstrap_servers, "linger.ms": 5})
            start = time.monotonic()
            while not self._halt.is_set():
                wait = start + self.sent / self.rate - time.monotonic()
                if wait > 0 and self._halt.wait(wait):
                    break
                order_id = self.sent + 1
                amount = max(self.random.random() * 100000, 1)
                province = self.random.randint(0, 6)
                message = {"createTime": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime()), "orderId": order_id,
                           "payAmount": amount, "payPlatform": 0 if self.random.random() < 0.9 else 1,
                           "provinceId": province}
                producer.produce(TOPIC, json.dumps(message).encode())
                producer.poll(0)
                self.totals[province] += amount
                self.sent += 1
            if producer.flush(60):
                raise RuntimeError("payment generator: records were not acknowledged by the broker within 60 s")
        except BaseException as exc:  # reported by the demo
            self.error = exc

    def stop(self) -> None:
        self._halt.set()
        self.join(90)


def index_totals(url: str) -> dict[str, float]:
    """The per-province totals as the index holds them now."""
    from elasticsearch import Elasticsearch, NotFoundError

    client = Elasticsearch(url)
    try:
        client.indices.refresh(index=INDEX)
        hits = client.search(index=INDEX, query={"match_all": {}}, size=1000)["hits"]["hits"]
    except NotFoundError:
        return {}
    finally:
        client.close()
    return {hit["_source"]["province"]: hit["_source"]["pay_amount"] for hit in hits}


def wrong_provinces(expected: dict[str, float], indexed: dict[str, float]) -> list[str]:
    """Provinces whose indexed total differs from the generated payments (or that should not be there)."""
    wrong = [p for p in expected if p not in indexed or abs(indexed[p] - expected[p]) > 1e-6 * max(1.0, abs(expected[p]))]
    return wrong + [p for p in indexed if p not in expected]


def script_for(bootstrap_servers: str, url: str) -> str:
    """The example script pointed at this run's broker and Elasticsearch."""
    text = (EXAMPLE_DIR / "payments.sql").read_text()
    return text.replace("'127.0.0.1:9092'", f"'{bootstrap_servers}'").replace("'http://127.0.0.1:9200'", f"'{url}'")


def run_payments_demo(duration: float = 60.0, rate: float = 20.0, out: TextIO = sys.stdout, table_api: bool = False) -> int:
    """Run the walkthrough end to end for ``duration`` seconds of input; 0 if the index is right at the end.

    With ``table_api`` the job is the walkthrough's Table API program instead of the SQL file."""
    from kindling.env import StreamEnvironment
    from kindling.local.elasticsearch import LocalElasticsearch
    from kindling.local.kafka import LocalKafka

    sys.path.insert(0, str(EXAMPLE_DIR))
    from payment_udfs import PROVINCES

    workdir = Path(tempfile.mkdtemp(prefix="kindling-payments-"))
    broker = LocalKafka(data_dir=workdir / "kafka")
    search = LocalElasticsearch(data_dir=workdir / "elasticsearch")
    generator = None
    job = None
    expected: dict[str, float] = {}
    indexed: dict[str, float] = {}
    try:
        broker.start()
        search.start()
        broker.create_topic(TOPIC, partitions=1)
        job_form = "Table API program" if table_api else "SQL file"
        print(f"kindling demo: payments (PyFlink walkthrough, the {job_form}) — Kafka on {broker.bootstrap_servers}, "
              f"Elasticsearch on {search.url}, index '{INDEX}'", file=out, flush=True)
        generator = PaymentGenerator(broker.bootstrap_servers, rate)
        generator.start()
        env = StreamEnvironment({"execution.checkpointing.interval": "1 s", "parallelism.default": 2,
                                 "state.checkpoints.dir": str(workdir / "checkpoints"), "kindling.log.level": "ERROR",
                                 "restart-strategy.type": "fixed-delay", "restart-strategy.fixed-delay.attempts": 3})
        if table_api:
            from kindling.program import load_program

            program = load_program(TABLE_API_FILE, "kindling_payments_program")
            job = program.log_processing(env, broker.bootstrap_servers, search.url)
        else:
            job = env.sql_session().execute_script(script_for(broker.bootstrap_servers, search.url))[-1]
        end = time.monotonic() + duration
        while time.monotonic() < end:
            time.sleep(min(3.0, max(0.0, end - time.monotonic())))  # a progress line every few seconds
            client = job.get_job_client()
            if client is not None and client.get_job_status() == "FAILED":
                raise RuntimeError(f"the job failed: {client.wait(timeout=0)}")
            totals = index_totals(search.url)
            line = "  ".join(f"{p}={totals[p]:.0f}" for p in PROVINCES if p in totals)
            print(f"  sent={generator.sent}  {line}", file=out, flush=True)
        generator.stop()
        if generator.error is not None:
            raise generator.error
        expected = {PROVINCES[p]: total for p, total in generator.totals.items()}
        deadline = time.monotonic() + max(120.0, duration)
        while True:  # the job catches up with the last payments
            indexed = index_totals(search.url)
            if not wrong_provinces(expected, indexed) or time.monotonic() > deadline:
                break
            time.sleep(1.0)  # polling the index of a running job
        print("  final totals: " + "  ".join(f"{p}={indexed.get(p, 0):.2f}" for p in PROVINCES if p in expected),
              file=out, flush=True)
    except KeyboardInterrupt:
        print("  interrupted", file=out, flush=True)
    finally:
        if generator is not None and generator.is_alive():
            generator.stop()
        client = job.get_job_client() if job is not None else None
        if client is not None:
            client.cancel()
        search.stop()
        broker.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    wrong = wrong_provinces(expected, indexed) if expected else ["(no payments)"]
    print(f"provinces={len(expected)} wrong={len(wrong)}", file=out, flush=True)
    return 0 if expected and not wrong else 1
