"""The job manager end to end: Flink's CLI and REST API, savepoints, restarts, Prometheus and the dashboard.

One job manager and three click-count jobs for the whole module (each job is a Spark driver
process, which takes tens of seconds to start on two cores), so the tests run in file order:
job A runs while the REST API, metrics and dashboard are checked; it is stopped with a
savepoint and job B resumes from it, is killed and restarted (fixed-delay); job C has no
restart strategy and fails when killed. Input arrives in phases, each just before the step
that must meet a busy job: the stop, and the kill.
"""

from __future__ import annotations

import os
import re
import signal
import sys
import uuid
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from kindling.local.ports import wait_until
from kindling.playground.click_generator import aligned_start

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "playground"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from click_helpers import OutputReader, events_for, expected_windows, normalise_start  # noqa: E402
from server_helpers import ROOT, dashboard_page, kindling, produce_clicks  # noqa: E402

pytestmark = pytest.mark.integration

# Windows completed by each input phase: before job A, just before the stop, just before the kill.
PHASES = (2, 3, 4)
WINDOWS = PHASES[-1]
CLICK_COUNT = str(ROOT / "examples" / "click_count.py")
SQL_JOB = str(Path(__file__).with_name("unbounded_job.sql"))
ARTIFACTS = ROOT / "artifacts"


def _submit(jobmanager: dict, *arguments: str) -> str:
    """``kindling run -d``; the job id it prints."""
    result = kindling("run", "-d", "-m", jobmanager["address"], *arguments)
    match = re.search(r"Job has been submitted with JobID ([0-9a-f]{32})", result.stdout)
    assert match, result.stdout
    return match.group(1)


def _click_count(source: str, sink: str, bootstrap: str) -> list[str]:
    return [CLICK_COUNT, "--bootstrap-servers", bootstrap, "--input-topic", source, "--output-topic", sink, "--checkpoint-interval", "1 s"]


def _state(http: httpx.Client, jid: str) -> str:
    return http.get(f"/jobs/{jid}").json()["state"]


def _wait_state(http: httpx.Client, jid: str, state: str, timeout: float = 240) -> None:
    def reached() -> bool:
        current = _state(http, jid)
        if current in ("FAILED", "CANCELED", "FINISHED") and current != state:
            raise AssertionError(f"job {jid} ended {current}: {http.get(f'/jobs/{jid}/exceptions').json()['root-exception']}")
        return current == state

    wait_until(reached, timeout, f"job {jid} to be {state}", interval=0.5)


def _metric(http: httpx.Client, jid: str, name: str) -> float:
    values = {m["id"]: float(m["value"]) for m in http.get(f"/jobs/{jid}/metrics", params={"get": name}).json()}
    return values.get(name, 0.0)


def _driver_pid(http: httpx.Client, jid: str) -> int:
    managers = [t for t in http.get("/taskmanagers").json()["taskmanagers"] if t["jobId"] == jid and t["kind"] == "driver"]
    assert len(managers) == 1, managers
    return int(managers[0]["pid"])


def _savepoint_path(output: str) -> Path:
    match = re.search(r"Savepoint completed\. Path: (\S+)", output)
    assert match, output
    return Path(match.group(1))


@pytest.fixture(scope="module")
def playground(kafka, jobmanager):
    suffix = uuid.uuid4().hex[:8]
    names = {k: f"jm-{k}-{suffix}" for k in ("in", "out")}
    for key, topic in names.items():
        kafka.create_topic(topic, partitions=4 if key.startswith("in") else 1)
    start_ms = aligned_start()
    produce_clicks(kafka.bootstrap_servers, names["in"], start_ms, 0, events_for(PHASES[0]))
    http = httpx.Client(base_url=jobmanager["url"], timeout=30)
    state = SimpleNamespace(
        http=http,
        bootstrap=kafka.bootstrap_servers,
        start_ms=start_ms,
        reader=OutputReader(kafka.bootstrap_servers, names["out"]),
        topics=names,
        savepoints=jobmanager["home"] / "savepoints",
        a=_submit(jobmanager, *_click_count(names["in"], names["out"], kafka.bootstrap_servers)),
        # Job C, an endless SQL job, only has to run: it is killed without a restart strategy.
        c=_submit(jobmanager, "-D", "restart-strategy.type=none", SQL_JOB),
        b=None,
    )
    yield state
    state.reader.close()
    for job in http.get("/jobs").json()["jobs"]:
        if job["status"] not in ("FINISHED", "CANCELED", "FAILED"):
            http.patch(f"/jobs/{job['id']}", params={"mode": "cancel"})
    http.close()


def test_run_detached_then_list_and_info(playground, jobmanager):
    http = playground.http
    _wait_state(http, playground.a, "RUNNING")
    playground.reader.wait_for(PHASES[0] * 6, timeout=240)  # job A counted the first phase
    listing = kindling("list", "-m", jobmanager["address"]).stdout
    assert re.search(rf"{playground.a} : Click Event Count \(RUNNING\)", listing), listing
    info = kindling("info", "-m", jobmanager["address"], playground.a).stdout
    assert '"state": "RUNNING"' in info and playground.a in info


def test_rest_routes_answer_with_flink_field_names(playground):
    http, jid = playground.http, playground.a
    assert {"refresh-interval", "timezone-name", "timezone-offset", "flink-version", "flink-revision", "features"} <= (
        http.get("/config").json().keys())
    overview = http.get("/overview").json()
    assert {"taskmanagers", "slots-total", "slots-available", "jobs-running", "jobs-finished", "jobs-cancelled", "jobs-failed",
            "flink-version", "flink-commit"} <= overview.keys()
    assert overview["jobs-running"] >= 1 and overview["taskmanagers"] >= 1
    assert {"id": jid, "status": "RUNNING"} in http.get("/jobs").json()["jobs"]
    summary = next(j for j in http.get("/jobs/overview").json()["jobs"] if j["jid"] == jid)
    assert {"jid", "name", "state", "start-time", "end-time", "duration", "last-modification", "tasks"} <= summary.keys()
    assert summary["name"] == "Click Event Count" and summary["tasks"]["running"] == summary["tasks"]["total"] > 0

    details = http.get(f"/jobs/{jid}").json()
    assert {"jid", "name", "isStoppable", "state", "start-time", "end-time", "duration", "maxParallelism", "now", "timestamps", "vertices",
            "status-counts", "plan"} <= details.keys()
    vertex = details["vertices"][0]
    assert {"id", "name", "maxParallelism", "parallelism", "status", "start-time", "end-time", "duration", "tasks", "metrics"} <= vertex.keys()
    assert details["vertices"][0]["kind"] == "source" and details["vertices"][-1]["kind"] == "sink"
    assert details["vertices"][-1]["name"] == "Sink: ClickEventStatistics Sink" and vertex["metrics"]["write-records"] > 0
    assert details["timestamps"]["RUNNING"] >= details["timestamps"]["CREATED"] > 0

    checkpoints = http.get(f"/jobs/{jid}/checkpoints").json()
    assert {"counts", "summary", "latest", "history"} <= checkpoints.keys()
    assert {"restored", "total", "in_progress", "completed", "failed"} <= checkpoints["counts"].keys()
    assert checkpoints["counts"]["completed"] >= 1
    latest = checkpoints["latest"]["completed"]
    assert {"className", "id", "status", "is_savepoint", "trigger_timestamp", "latest_ack_timestamp", "state_size",
            "end_to_end_duration", "num_subtasks", "num_acknowledged_subtasks", "external_path", "discarded"} <= latest.keys()
    assert latest["status"] == "COMPLETED"

    exceptions = http.get(f"/jobs/{jid}/exceptions").json()
    assert {"root-exception", "timestamp", "all-exceptions", "truncated", "exceptionHistory"} <= exceptions.keys()
    assert exceptions["exceptionHistory"] == {"entries": [], "truncated": False}

    available = {m["id"] for m in http.get(f"/jobs/{jid}/metrics").json()}
    assert {"numRecordsInPerSecond", "numRecordsOutPerSecond", "batchDuration", "currentInputWatermark", "stateRows",
            "stateBytes", "pendingRecords", "numberOfCompletedCheckpoints", "lastCheckpointDuration", "numRestarts"} <= available
    values = http.get(f"/jobs/{jid}/metrics", params={"get": "numRecordsIn,numRestarts"}).json()
    assert {m["id"] for m in values} == {"numRecordsIn", "numRestarts"} and all(isinstance(m["value"], str) for m in values)
    aggregated = http.get("/jobs/metrics", params={"get": "numRecordsIn", "jobs": jid}).json()
    assert aggregated[0]["id"] == "numRecordsIn" and {"min", "max", "avg", "sum"} <= aggregated[0].keys() and aggregated[0]["sum"] > 0

    managers = http.get("/taskmanagers").json()["taskmanagers"]
    assert {"id", "path", "dataPort", "jmxPort", "timeSinceLastHeartbeat", "slotsNumber", "freeSlots", "totalResource",
            "freeResource", "hardware", "memoryConfiguration"} <= managers[0].keys()

    # A savepoint through REST: trigger, then poll the trigger id as Flink's clients do.
    request = http.post(f"/jobs/{jid}/savepoints", json={"target-directory": str(playground.savepoints), "cancel-job": False})
    assert request.status_code == 202
    trigger = request.json()["request-id"]
    wait_until(lambda: http.get(f"/jobs/{jid}/savepoints/{trigger}").json()["status"]["id"] == "COMPLETED", 180, "the savepoint", interval=0.5)
    operation = http.get(f"/jobs/{jid}/savepoints/{trigger}").json()["operation"]
    assert Path(operation["location"], "_metadata").is_file(), operation
    assert http.get(f"/jobs/{jid}/checkpoints").json()["latest"]["savepoint"]["external_path"] == operation["location"]
    assert _state(http, jid) == "RUNNING"  # a savepoint alone keeps the job running

    disposal = http.post("/savepoint-disposal", json={"savepoint-path": operation["location"]}).json()["request-id"]
    assert http.get(f"/savepoint-disposal/{disposal}").json() == {"status": {"id": "COMPLETED"}, "operation": {}}
    assert not Path(operation["location"]).exists()
    failed = http.post("/savepoint-disposal", json={"savepoint-path": str(playground.savepoints / "missing")}).json()["request-id"]
    assert "not a kindling savepoint" in http.get(f"/savepoint-disposal/{failed}").json()["operation"]["failure-cause"]["stack-trace"]

    paths = http.get("/openapi.json").json()["paths"]
    for route in ("/overview", "/config", "/jobs", "/jobs/overview", "/jobs/{jid}", "/jobs/{jid}/stop", "/jobs/{jid}/savepoints",
                  "/jobs/{jid}/savepoints/{trigger_id}", "/savepoint-disposal", "/jobs/{jid}/checkpoints", "/jobs/{jid}/exceptions",
                  "/jobs/{jid}/metrics", "/jobs/metrics", "/taskmanagers", "/kindling/run", "/metrics"):
        assert route in paths, route
    assert "patch" in paths["/jobs/{jid}"]


def test_unknown_ids_answer_404_with_flink_errors(playground):
    http = playground.http
    unknown = uuid.uuid4().hex
    for method, path in (("GET", f"/jobs/{unknown}"), ("PATCH", f"/jobs/{unknown}?mode=cancel"), ("POST", f"/jobs/{unknown}/stop"),
                         ("POST", f"/jobs/{unknown}/savepoints"), ("GET", f"/jobs/{unknown}/checkpoints"),
                         ("GET", f"/jobs/{unknown}/exceptions"), ("GET", f"/jobs/{unknown}/metrics"),
                         ("GET", f"/jobs/{playground.a}/savepoints/{unknown}"), ("GET", f"/savepoint-disposal/{unknown}")):
        response = http.request(method, path, json={} if method == "POST" else None)
        assert response.status_code == 404, (method, path, response.text)
        assert isinstance(response.json()["errors"], list) and response.json()["errors"], response.text
    assert http.get("/jobs/not-a-job-id").status_code == 400
    bad = http.post("/kindling/run", json={"file": CLICK_COUNT, "flinkConfiguration": {"restart-strategy.type": "sometimes"}})
    assert bad.status_code == 400 and "restart-strategy.type" in bad.json()["errors"][0]


def test_prometheus_metrics_parse_and_carry_job_metrics(playground):
    from prometheus_client.parser import text_string_to_metric_families

    text = playground.http.get("/metrics").text
    samples = {(s.name, s.labels.get("job_id")): s.value for family in text_string_to_metric_families(text) for s in family.samples}
    assert samples[("kindling_job_num_records_in", playground.a)] > 0
    assert samples[("kindling_job_number_of_completed_checkpoints", playground.a)] >= 1
    assert ("kindling_job_num_records_in_per_second", playground.a) in samples
    restarts = samples.get(("kindling_job_num_restarts", playground.a))
    assert ("kindling_job_current_input_watermark", playground.a) in samples, (
        f"no watermark for job A (restarts: {restarts}): {playground.http.get(f'/jobs/{playground.a}/exceptions').json()}")
    assert samples[("kindling_jobmanager_jobs", None)] >= 0


def test_dashboard_shows_the_running_job_and_plots_throughput(playground, jobmanager):
    with dashboard_page(jobmanager["url"] + "/") as page:
        row = page.locator(f"tr.job-row[data-jid='{playground.a}']")
        row.wait_for(timeout=30_000)
        assert "RUNNING" in row.inner_text() and "Click Event Count" in row.inner_text()
        # Its driver among the task managers (on a cluster, its executors too: test_click_count_cluster.py).
        drivers = page.locator("#taskmanagers tr.tm-row[data-kind='driver']")
        assert drivers.count() >= 1 and "Click Event Count" in page.locator("#taskmanagers").inner_text()
        row.locator("a.job-link").click()
        page.wait_for_function("document.querySelectorAll('#plot-throughput circle.point').length > 1", timeout=60_000)
        assert page.locator("#job-state").inner_text() == "RUNNING"
        heights = page.eval_on_selector_all("#plot-throughput circle.point", "points => points.map(p => Number(p.getAttribute('cy')))")
        assert min(heights) < max(heights)  # records were read: the throughput is not flat at zero
        assert page.locator("#checkpoints tbody tr").count() >= 1
        assert page.locator("#vertices tr.vertex-row[data-kind='source']").count() == 1
        assert page.locator("#vertices tr.vertex-row[data-kind='sink']").count() == 1
        assert "interval 1000 ms" in page.locator("#checkpoint-config").inner_text()
        assert page.locator("#reconciliation").inner_text() == "Not reconciled yet."
        page.wait_for_function("document.getElementById('sink-contents').textContent.startsWith('No sink')", timeout=30_000)
        # A DataStream program: the reconciliation starts beside the job and says, by name, what it cannot re-run.
        page.locator("#btn-reconcile").click()
        page.wait_for_function("document.getElementById('reconciliation').textContent.includes('FAILED')", timeout=60_000)
        failure = page.locator("#reconciliation").inner_text()
        assert "from_source (ClickEvent Source): a DataStream pipeline cannot be re-run" in failure, failure
        page.screenshot(path=str(ARTIFACTS / "dashboard-job.png"), full_page=True)
    assert (ARTIFACTS / "dashboard-job.png").stat().st_size > 10_000


def test_stop_with_savepoint_resume_and_recover_from_a_killed_driver(playground, jobmanager):
    http, reader, address = playground.http, playground.reader, jobmanager["address"]
    taken = _savepoint_path(kindling("savepoint", "-m", address, playground.a, str(playground.savepoints)).stdout)
    assert (taken / "_metadata").is_file()
    produce_clicks(playground.bootstrap, playground.topics["in"], playground.start_ms, events_for(PHASES[0]), events_for(PHASES[1]))
    stopped = _savepoint_path(kindling("stop", "-m", address, "--savepointPath", str(playground.savepoints), playground.a).stdout)
    _wait_state(http, playground.a, "FINISHED", timeout=60)  # stop-with-savepoint ends FINISHED, as in Flink
    assert http.get(f"/jobs/{playground.a}").json()["lastSavepoint"] == str(stopped)

    playground.b = _submit(jobmanager, "-s", str(stopped), "-D", "restart-strategy.type=fixed-delay",
                           "-D", "restart-strategy.fixed-delay.attempts=2", "-D", "restart-strategy.fixed-delay.delay=1 s",
                           *_click_count(playground.topics["in"], playground.topics["out"], playground.bootstrap))
    _wait_state(http, playground.b, "RUNNING")
    reader.wait_for(PHASES[1] * 6, timeout=240)
    reader.poll(2.0)
    # Across the savepoint, the stop and the resume, no window was emitted twice or lost.
    assert len(reader.records) == len(reader.distinct()), sorted(map(str, reader.records))
    windows = {(normalise_start(s), p): c for (s, p), c in reader.distinct().items()}
    assert set(windows) == expected_windows(playground.start_ms, PHASES[1]) and set(windows.values()) == {1000}, windows
    assert http.get(f"/jobs/{playground.b}/checkpoints").json()["counts"]["restored"] >= 1

    produce_clicks(playground.bootstrap, playground.topics["in"], playground.start_ms, events_for(PHASES[1]), events_for(PHASES[2]))
    os.killpg(_driver_pid(http, playground.b), signal.SIGKILL)  # the driver: Python and its Spark JVM
    wait_until(lambda: any("SIGKILL" in e["stacktrace"] for e in http.get(f"/jobs/{playground.b}/exceptions").json()["exceptionHistory"]["entries"]),
               60, "the killed driver in the exceptions history", interval=0.2)
    _wait_state(http, playground.b, "RUNNING")
    assert _metric(http, playground.b, "numRestarts") >= 1

    reader.wait_for(WINDOWS * 6, timeout=300)
    windows = {(normalise_start(s), p): c for (s, p), c in reader.distinct().items()}
    assert set(windows) == expected_windows(playground.start_ms, WINDOWS)
    # At-least-once output may repeat a window after the kill, but never with another count.
    assert {int(r["count"]) for r in reader.records} == {1000}, windows

    kindling("cancel", "-m", address, playground.b)
    _wait_state(http, playground.b, "CANCELED", timeout=60)
    kindling("savepoint", "-m", address, "-d", str(stopped))
    assert not stopped.exists()


def test_killed_driver_without_restart_strategy_fails_with_the_exception_recorded(playground):
    http, jid = playground.http, playground.c
    _wait_state(http, jid, "RUNNING")
    os.killpg(_driver_pid(http, jid), signal.SIGKILL)
    _wait_state(http, jid, "FAILED", timeout=60)
    exceptions = http.get(f"/jobs/{jid}/exceptions").json()
    entry = exceptions["exceptionHistory"]["entries"][0]
    assert entry["exceptionName"] == "DriverFailure" and "killed by SIGKILL" in entry["stacktrace"]
    assert "SIGKILL" in exceptions["root-exception"]


def test_job_records_survive_a_job_manager_restart(playground, jobmanager):
    before = {j["jid"]: (j["name"], j["state"]) for j in playground.http.get("/jobs/overview").json()["jobs"]}
    assert {before[playground.a][1], before[playground.b][1], before[playground.c][1]} == {"FINISHED", "CANCELED", "FAILED"}
    kindling("cluster", "stop", "--home", str(jobmanager["home"]))
    kindling("cluster", "start", "--port", str(jobmanager["port"]), "--home", str(jobmanager["home"]), timeout=120)
    after = {j["jid"]: (j["name"], j["state"]) for j in playground.http.get("/jobs/overview").json()["jobs"]}
    assert after == before
    listing = kindling("list", "-a", "-m", jobmanager["address"]).stdout
    assert f"{playground.c} : insert-into_sink (FAILED)" in listing
