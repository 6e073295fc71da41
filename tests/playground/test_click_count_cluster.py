"""The operations playground's failure exercises on a Spark standalone cluster, under the job manager.

The click-count job runs on a 2-worker cluster, submitted to the job manager. Mid-stream a worker (its JVM,
its executor and Python workers) is SIGKILLed: Spark runs the lost tasks again on the other worker, and the
job manager lists the executors as task managers, reports the loss in the exceptions history and counts it
as a restart. Then the driver itself is SIGKILLed: the job manager restarts it from its last checkpoint. The
exactly-once Kafka sink still holds every (window, page) once, with its 1000 clicks.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest
from click_helpers import OutputReader, events_for, expected_windows, normalise_start

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "server"))
from server_helpers import produce_clicks  # noqa: E402

from kindling.local.ports import wait_until  # noqa: E402
from kindling.local.spark import alive_workers, descendants, wait_for_workers  # noqa: E402
from kindling.playground.click_generator import ClickEventGenerator  # noqa: E402

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
WINDOWS = 6
BEFORE_DRIVER_KILL = 4  # windows of clicks put before the driver is killed; the rest come after


def _executors(pid: int) -> list[int]:
    """Executor JVMs below a worker."""
    found = []
    for child in descendants(pid):
        try:
            if b"CoarseGrainedExecutorBackend" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(child)
        except OSError:
            continue
    return found


def _submit(jobmanager: dict, *arguments: str) -> str:
    result = subprocess.run([sys.executable, "-m", "kindling.cli", "run", "-d", "-m", jobmanager["address"], *arguments],
                            capture_output=True, text=True, timeout=300, cwd=ROOT)
    match = re.search(r"JobID ([0-9a-f]{32})", result.stdout)
    assert result.returncode == 0 and match, result.stdout + result.stderr
    return match.group(1)


def _task_managers(http: httpx.Client, jid: str, kind: str) -> list[dict]:
    return [t for t in http.get("/taskmanagers").json()["taskmanagers"] if t["jobId"] == jid and t["kind"] == kind]


def _exceptions(http: httpx.Client, jid: str) -> list[dict]:
    return http.get(f"/jobs/{jid}/exceptions").json()["exceptionHistory"]["entries"]


def _restarts(http: httpx.Client, jid: str) -> float:
    values = {m["id"]: float(m["value"]) for m in http.get(f"/jobs/{jid}/metrics", params={"get": "numRestarts"}).json()}
    return values.get("numRestarts", 0.0)


def _completed_after(http: httpx.Client, jid: str, moment_ms: int) -> bool:
    history = http.get(f"/jobs/{jid}/checkpoints").json()["history"]
    return any(c["status"] == "COMPLETED" and c["latest_ack_timestamp"] > moment_ms for c in history)


def _running(http: httpx.Client, jid: str) -> bool:
    state = http.get(f"/jobs/{jid}").json()["state"]
    if state in ("FAILED", "CANCELED", "FINISHED"):
        raise AssertionError(f"job {jid} ended {state}: {http.get(f'/jobs/{jid}/exceptions').json()['root-exception']}")
    return state == "RUNNING"


def test_click_count_survives_a_lost_worker_and_a_killed_driver_exactly_once(spark_cluster, kafka, jobmanager):
    suffix = uuid.uuid4().hex[:8]
    source, sink = f"cl-in-{suffix}", f"cl-out-{suffix}"
    kafka.create_topic(source, partitions=4)
    kafka.create_topic(sink, partitions=1)
    generator = ClickEventGenerator(kafka.bootstrap_servers, source, rate=1200)
    http = httpx.Client(base_url=jobmanager["url"], timeout=30)
    reader = OutputReader(kafka.bootstrap_servers, sink)
    jid = _submit(
        jobmanager, "-D", f"kindling.spark.master={spark_cluster.master_url}", "-D", "spark.executor.memory=512m",
        # Spark gives a starting Python worker 10 s to connect back, too little on a busy machine: a failing query
        # restarts from its checkpoint, as Flink's default with checkpointing does; a killed driver restarts too.
        "-D", "restart-strategy.type=fixed-delay", "-D", "restart-strategy.fixed-delay.attempts=20",
        "-D", "restart-strategy.fixed-delay.delay=1 s",
        str(ROOT / "examples" / "click_count.py"), "--bootstrap-servers", kafka.bootstrap_servers, "--input-topic", source,
        "--output-topic", sink, "--checkpoint-interval", "1 s", "--exactly-once")
    victim = spark_cluster.worker_processes[0].pid
    try:
        wait_until(lambda: _executors(victim) and _executors(spark_cluster.worker_processes[1].pid), 600,
                   "an executor on each worker", interval=0.5)
        wait_until(lambda: _running(http, jid) and http.get(f"/jobs/{jid}/checkpoints").json()["counts"]["completed"] > 0,
                   600, "the job's first committed micro-batch", interval=0.5)
        # The job manager lists both executors as the job's task managers, beside its driver.
        wait_until(lambda: len(_task_managers(http, jid, "executor")) == 2, 60, "two executors listed", interval=0.5)
        generator.start(limit=events_for(BEFORE_DRIVER_KILL))  # 20 s of clicks
        reader.wait_for(6, timeout=600)  # the job is committing windows: now lose a machine
        assert len(reader.distinct()) < WINDOWS * 6, "every window was out before the kill; the kill must land mid-stream"
        killed_at = int(time.time() * 1000)
        spark_cluster.kill_worker(0)
        wait_for_workers(spark_cluster.ui_url, 1, timeout=120)  # the master saw the loss
        wait_until(lambda: _completed_after(http, jid, killed_at), 300, "a micro-batch committed after the worker's loss", interval=0.5)
        recovered = min(c["latest_ack_timestamp"] for c in http.get(f"/jobs/{jid}/checkpoints").json()["history"]
                        if c["status"] == "COMPLETED" and c["latest_ack_timestamp"] > killed_at) - killed_at
        print(f"recovery: worker killed -> next committed micro-batch in {recovered / 1000:.1f} s")
        wait_until(lambda: any(e["exceptionName"] == "ExecutorLostFailure" for e in _exceptions(http, jid)), 60,
                   "the lost executor in the exceptions history", interval=0.5)
        assert _restarts(http, jid) >= 1
        assert len(_task_managers(http, jid, "executor")) == 1

        # The driver-kill variant: its Python process and Spark JVM at once; the job manager restarts it.
        driver = _task_managers(http, jid, "driver")
        assert len(driver) == 1, driver
        os.killpg(int(driver[0]["pid"]), signal.SIGKILL)
        wait_until(lambda: any(e["exceptionName"] == "DriverFailure" for e in _exceptions(http, jid)), 60,
                   "the killed driver in the exceptions history", interval=0.5)
        wait_until(lambda: generator.sent == events_for(BEFORE_DRIVER_KILL), 120, "the first clicks put", interval=0.2)
        produce_clicks(kafka.bootstrap_servers, source, generator.start_ms, events_for(BEFORE_DRIVER_KILL), events_for(WINDOWS))
        reader.wait_for(WINDOWS * 6, timeout=600)
        reader.poll(3.0)  # a window written twice would show up now
        assert _running(http, jid)
        assert _restarts(http, jid) >= 2
    finally:
        generator.stop()
        if http.get(f"/jobs/{jid}").json()["state"] not in ("FAILED", "CANCELED", "FINISHED"):
            http.patch(f"/jobs/{jid}", params={"mode": "cancel"})
            wait_until(lambda: http.get(f"/jobs/{jid}").json()["state"] in ("CANCELED", "FAILED"), 120, "the job's end", interval=0.5)
        reader.close()
        http.close()
        if len(alive_workers(spark_cluster.ui_url)) < 2:
            spark_cluster.start_worker(0)  # the next test gets its 2-worker cluster back
    windows = [((normalise_start(r["windowStart"]), r["page"]), r["count"]) for r in reader.records]
    assert {key for key, _ in windows} == expected_windows(generator.start_ms, WINDOWS)
    assert len(windows) == WINDOWS * 6, "a window was emitted twice by the exactly-once sink"
    assert all(count == 1000 for _, count in windows), windows
