"""The dashboard charts a job's index, as Kibana does in Flink's PyFlink walkthrough.

The walkthrough's Table API program (examples/payments/payment_msg_processing.py, unchanged: it returns
right after ``execute_insert``) is submitted to a job manager; the job's driver reads its sink's index when
asked (``GET /kindling/jobs/<id>/sink-contents``), the job page draws a bar per province, and after the job
is cancelled the last contents read are still shown.
"""

from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

import httpx
import pytest

from kindling.local.ports import wait_until

sys.path.insert(0, str(Path(__file__).resolve().parent))
from server_helpers import ROOT, dashboard_page, kindling  # noqa: E402

pytestmark = pytest.mark.integration

PROGRAM = ROOT / "examples" / "payments" / "payment_msg_processing.py"
PROVINCES = ("beijing", "shanghai", "hangzhou", "shenzhen", "jiangxi", "chongqing", "xizang")
ARTIFACTS = ROOT / "artifacts"


def test_the_job_page_charts_the_payments_index(kafka, elasticsearch, jobmanager, tmp_path):
    from confluent_kafka import Producer

    kafka.create_topic("payment_msg", partitions=1)
    expected: dict[str, float] = defaultdict(float)
    producer = Producer({"bootstrap.servers": kafka.bootstrap_servers})
    for i in range(1, 71):
        payment = {"createTime": f"2024-01-01 00:00:{i % 60:02d}", "orderId": i, "payAmount": float(i * 10 + i % 3),
                   "payPlatform": i % 2, "provinceId": (i * 3) % 7}
        producer.produce("payment_msg", json.dumps(payment).encode())
        expected[PROVINCES[payment["provinceId"]]] += payment["payAmount"]
    assert producer.flush(30) == 0
    # The program takes its servers from the environment; this wrapper sets them and runs it as it ships.
    wrapper = tmp_path / "payments_job.py"
    wrapper.write_text("import os, runpy, sys\n"
                       "os.environ['KAFKA_BOOTSTRAP_SERVERS'], os.environ['ELASTICSEARCH_HOSTS'] = sys.argv[1], sys.argv[2]\n"
                       f"runpy.run_path({str(PROGRAM)!r}, run_name='__main__')\n")
    submitted = kindling("run", "-d", "-m", jobmanager["address"], "-D", "execution.checkpointing.interval=1 s",
                         str(wrapper), kafka.bootstrap_servers, elasticsearch.url)
    jid = re.search(r"JobID ([0-9a-f]{32})", submitted.stdout).group(1)
    http = httpx.Client(base_url=jobmanager["url"], timeout=60)
    contents: dict = {}

    def indexed() -> bool:
        nonlocal contents
        state = http.get(f"/jobs/{jid}").json()["state"]
        assert state in ("CREATED", "RUNNING", "RESTARTING"), http.get(f"/jobs/{jid}/exceptions").json()["root-exception"]
        contents = http.get(f"/kindling/jobs/{jid}/sink-contents").json()
        rows = {r[0]: r[1] for sink in contents["sinks"] for r in sink.get("rows", [])}
        return rows.keys() == expected.keys() and all(abs(rows[p] - expected[p]) < 1e-6 for p in expected)

    try:
        wait_until(indexed, 300, "the index to hold the payments' totals", interval=1.0)
        (sink,) = contents["sinks"]
        assert sink["location"] == f"elasticsearch-7 {elasticsearch.url} index 'platform_pay_amount_1'"
        assert sink["columns"] == ["province", "pay_amount"] and sink["key"] == ["province"] and sink["total"] == 7
        assert contents["stale"] is False

        with dashboard_page(f"{jobmanager['url']}/#/job/{jid}") as page:
            page.wait_for_function("document.querySelectorAll('#sink-contents rect.bar').length === 7", timeout=60_000)
            drawn = page.eval_on_selector_all("#sink-contents rect.bar",
                                              "bars => bars.map(b => [b.dataset.label, Number(b.dataset.value), Number(b.getAttribute('width'))])")
            assert [label for label, _, _ in drawn] == sorted(expected)
            assert all(abs(value - expected[label]) < 1e-6 for label, value, _ in drawn)
            widest = max(expected, key=expected.get)
            assert max(drawn, key=lambda bar: bar[2])[0] == widest  # bars are drawn to scale
            assert "pay_amount by province" in page.locator("#sink-contents").inner_text()
            page.screenshot(path=str(ARTIFACTS / "dashboard-sink-contents.png"), full_page=True)

        http.patch(f"/jobs/{jid}", params={"mode": "cancel"})
        wait_until(lambda: http.get(f"/jobs/{jid}").json()["state"] == "CANCELED", 120, "the job to be cancelled", interval=0.5)
        last = http.get(f"/kindling/jobs/{jid}/sink-contents").json()
        assert last["stale"] is True and last["sinks"][0]["rows"] == sink["rows"]
    finally:
        if http.get(f"/jobs/{jid}").json()["state"] not in ("CANCELED", "FAILED", "FINISHED"):
            http.patch(f"/jobs/{jid}", params={"mode": "cancel"})
        http.close()
