"""Flink's wire format, route by route, on a job manager holding recorded jobs (no Spark: fast).

Each served route's response is validated against Flink's schema for it (flink_rest_schema.py);
the vertex metrics are checked against figures worked out by hand; a failed operation's
``failure-cause`` is a Java object stream the JVM reads back (when Java is present).
"""

from __future__ import annotations

import base64
import shutil
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Optional

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

from kindling.runtime import metrics
from kindling.runtime.json_files import write_json
from kindling.server.jobmanager import JobManager
from kindling.server.rest import create_app
from kindling.server.store import JobRecord
from kindling.server.throwable import serialized_throwable

sys.path.insert(0, str(Path(__file__).resolve().parent))
from flink_rest_schema import KINDLING_ROUTES, ROUTES, errors

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
RUNNING, FINISHED = "a" * 32, "b" * 32


def _progress(batch: int, duration_ms: int, rows_in: int, rows_out: Optional[int], state: list[str]) -> dict[str, Any]:
    """A Spark StreamingQueryProgress as Spark reports it (the fields kindling reads)."""
    at = START + timedelta(seconds=batch)
    return {
        "batchId": batch,
        "timestamp": at.isoformat().replace("+00:00", "Z"),
        "numInputRows": rows_in,
        "inputRowsPerSecond": float(rows_in),
        "processedRowsPerSecond": rows_in / (duration_ms / 1000),
        "durationMs": {"triggerExecution": duration_ms, "walCommit": 3, "commitOffsets": 2},
        "eventTime": {"watermark": (at - timedelta(seconds=5)).isoformat().replace("+00:00", "Z")},
        "stateOperators": [{"operatorName": name, "numRowsTotal": 10, "memoryUsedBytes": 1000} for name in state],
        "sink": {"numOutputRows": -1 if rows_out is None else rows_out},
        "sources": [],
    }


def _record(home: Path, jid: str, state: str, name: str) -> JobRecord:
    record = JobRecord(jid=jid, name=name, kind="sql", file="/jobs/job.sql", args=[], cwd=str(home), directory=str(home / "jobs" / jid),
                       configuration={"execution.checkpointing.interval": "1 s", "parallelism.default": "2"})
    record.set_state("CREATED")
    record.set_state(state)
    return record


class _Driver:
    """Stands in for a job's driver process: answers a savepoint request with a location at once."""

    def __init__(self, record: JobRecord, location: str, status: dict[str, Any]) -> None:
        self.record, self.location, self.status, self.requests = record, location, status, []

    def request(self, request_id: str, kind: str, target: Optional[str], drain: bool) -> None:
        self.requests.append((request_id, kind, target))

    def response(self, request_id: str) -> Optional[dict]:
        return {"location": self.location} if any(r[0] == request_id for r in self.requests) else None


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Any:
    home = tmp_path_factory.mktemp("jobmanager")
    manager = JobManager(home, port=8081)
    running = _record(home, RUNNING, "RUNNING", "windowed counts")
    finished = _record(home, FINISHED, "FINISHED", "copy")
    for record in (running, finished):
        manager.store.add(record)
    # The running job: one query with an aggregation, two batches of 500 ms and 1500 ms against a 1 s trigger.
    points = metrics.query_points([_progress(0, 500, 100, 4, ["stateStoreSave"]), _progress(1, 1500, 300, 6, ["stateStoreSave"])])
    status = {
        "pid": 1, "state": "RUNNING", "configuration": running.configuration,
        "queries": {"counts": {"name": "counts sink", "checkpoint": str(home / "cp"), "points": points, "lastOffsetBatch": 1,
                               "lastCommittedBatch": 1}},
    }
    # The finished job: a stateless copy whose sink reports no row counts (-1, as foreachBatch sinks do).
    write_json(Path(finished.directory) / "status.json", {
        "pid": 2, "state": "FINISHED", "configuration": finished.configuration,
        "queries": {"copy": {"name": "copy sink", "checkpoint": str(home / "cp2"), "points": metrics.query_points([_progress(0, 200, 50, None, [])]),
                             "lastOffsetBatch": 0, "lastCommittedBatch": 0}},
    })
    manager.supervisors[RUNNING] = _Driver(running, str(home / "savepoints" / "savepoint-1"), status)  # type: ignore[assignment]
    with TestClient(create_app(manager)) as client:
        yield client, manager


def _valid(response: Any, method: str, route: str) -> Any:
    assert response.status_code in (200, 202), (route, response.status_code, response.text)
    body = response.json()
    problems = errors(body, ROUTES[(method, route)])
    assert not problems, f"{method} {route}:\n" + "\n".join(problems)
    return body


def test_every_served_route_has_a_flink_schema(served):
    client, _ = served
    routes = {(method, route.path) for route in client.app.routes if isinstance(route, APIRoute) for method in route.methods}
    assert routes - set(ROUTES) - KINDLING_ROUTES == set(), "routes served without a Flink schema to check them against"
    assert set(ROUTES) <= routes


def test_every_route_answers_in_flink_wire_format(served):
    client, _ = served
    for method, route in ROUTES:
        if method != "GET" or "trigger_id" in route:
            continue
        for jid in (RUNNING, FINISHED) if "{jid}" in route else (None,):
            _valid(client.get("/v1" + route.replace("{jid}", jid or "")), method, route)
    overview = client.get("/jobs/overview").json()["jobs"]
    assert {j["jid"]: j["state"] for j in overview} == {RUNNING: "RUNNING", FINISHED: "FINISHED"}
    tasks = next(j for j in overview if j["jid"] == RUNNING)["tasks"]
    # Three vertices (source, aggregation, sink) of parallelism 2, every task running.
    assert tasks["total"] == 6 and tasks["running"] == 6
    applications = client.get("/applications/overview").json()["applications"]
    assert sorted(a["jobs"]["RUNNING"] + a["jobs"]["FINISHED"] for a in applications) == [1, 1]
    config = client.get(f"/jobs/{RUNNING}/checkpoints/config").json()
    assert config["interval"] == 1000 and config["mode"] == "exactly_once"
    assert {e["key"] for e in client.get("/jobmanager/config").json()} >= {"rest.port", "rest.address"}


def test_sink_contents_of_a_job_never_read_and_the_last_ones_read(served):
    client, _ = served
    assert client.get(f"/kindling/jobs/{FINISHED}/sink-contents").json() == {"status": "NONE", "sinks": []}
    assert client.get(f"/kindling/jobs/{FINISHED}/sink-contents", params={"limit": 0}).status_code == 400
    assert client.get(f"/kindling/jobs/{'c' * 32}/sink-contents").status_code == 404


def test_a_reconciliation_runs_beside_the_job_and_keeps_its_outcome(served):
    client, _ = served
    assert client.get(f"/kindling/jobs/{FINISHED}/reconciliation").json() == {"status": "NONE"}
    started = client.post(f"/kindling/jobs/{FINISHED}/reconciliation")
    assert started.status_code == 202 and started.json()["status"] == "RUNNING"
    deadline = time.monotonic() + 120
    while (state := client.get(f"/kindling/jobs/{FINISHED}/reconciliation").json())["status"] == "RUNNING":
        assert time.monotonic() < deadline, "the reconciliation did not end"
        time.sleep(0.2)
    # The record's script (/jobs/job.sql) is not on this machine: the reconciliation ends FAILED, saying so.
    assert state["status"] == "FAILED" and state["exit-code"] == 2
    assert state["error"] == "kindling: the SQL script /jobs/job.sql does not exist"
    assert client.post("/kindling/jobs/" + "c" * 32 + "/reconciliation").status_code == 404


def test_vertices_are_source_operators_sink_with_time_metrics(served):
    client, _ = served
    job = client.get(f"/jobs/{RUNNING}").json()
    assert [(v["kind"], v["name"]) for v in job["vertices"]] == [
        ("source", "Source: counts sink"), ("operator", "stateStoreSave"), ("sink", "Sink: counts sink")]
    source, operator, sink = job["vertices"]
    assert source["metrics"]["write-records"] == 400 and sink["metrics"]["read-records"] == 10 and sink["metrics"]["read-records-complete"]
    assert not operator["metrics"]["read-records-complete"]
    # Batches of 500 and 1500 ms against 1000 ms: the source is busy 500 + 1000, held back 500, idle 500 of 2500 ms.
    assert source["kindling-metrics"]["busyTimeMsPerSecond"] == pytest.approx(600)
    assert source["kindling-metrics"]["backPressuredTimeMsPerSecond"] == pytest.approx(200)
    assert source["kindling-metrics"]["idleTimeMsPerSecond"] == pytest.approx(200)
    assert sink["kindling-metrics"]["busyTimeMsPerSecond"] == pytest.approx(800)
    assert source["kindling-metrics"]["currentInputWatermark"] == (START + timedelta(seconds=1 - 5)).timestamp() * 1000
    assert operator["kindling-metrics"]["stateRows"] == 10
    edges = [(n["id"], [i["id"] for i in n["inputs"]]) for n in job["plan"]["nodes"]]
    assert edges == [(source["id"], []), (operator["id"], [source["id"]]), (sink["id"], [operator["id"]])]
    finished = client.get(f"/jobs/{FINISHED}").json()
    assert [v["kind"] for v in finished["vertices"]] == ["source", "sink"]
    assert not finished["vertices"][1]["metrics"]["read-records-complete"]  # the sink reported no counts
    assert finished["status-counts"]["FINISHED"] == 2


def test_savepoint_trigger_and_status_in_flink_wire_format(served):
    client, manager = served
    trigger = _valid(client.post(f"/jobs/{RUNNING}/savepoints", json={"target-directory": "/tmp/sp", "cancel-job": False, "triggerId": "c" * 32}),
                     "POST", "/jobs/{jid}/savepoints")["request-id"]
    assert trigger == "c" * 32  # the client's trigger id names the operation, as in Flink
    operation = manager.operation(trigger)
    operation.status, operation.location = "COMPLETED", "/tmp/sp/savepoint-1"
    body = _valid(client.get(f"/jobs/{RUNNING}/savepoints/{trigger}"), "GET", "/jobs/{jid}/savepoints/{trigger_id}")
    assert body == {"status": {"id": "COMPLETED"}, "operation": {"location": "/tmp/sp/savepoint-1"}}
    operation.location, operation.failure = None, "the job ended CANCELED before the savepoint completed"
    body = _valid(client.get(f"/jobs/{RUNNING}/savepoints/{trigger}"), "GET", "/jobs/{jid}/savepoints/{trigger_id}")
    assert "CANCELED before the savepoint" in body["operation"]["failure-cause"]["stack-trace"]
    stop = _valid(client.post(f"/jobs/{RUNNING}/stop", json={"targetDirectory": "/tmp/sp", "drain": False}), "POST", "/jobs/{jid}/stop")["request-id"]
    assert manager.operation(stop).kind == "stop"
    disposal = _valid(client.post("/savepoint-disposal", json={"savepoint-path": "/tmp/not-a-savepoint"}), "POST",
                      "/savepoint-disposal")["request-id"]
    body = _valid(client.get(f"/savepoint-disposal/{disposal}"), "GET", "/savepoint-disposal/{trigger_id}")
    assert "not a kindling savepoint" in body["operation"]["failure-cause"]["stack-trace"]


def test_errors_are_flink_error_bodies(served):
    client, _ = served
    for method, path, code in (("GET", "/v1/jobs/" + "d" * 32, 404), ("GET", "/no/such/route", 404), ("PATCH", f"/jobs/{FINISHED}?mode=cancel", 409),
                               ("GET", "/jobs/not-a-job", 400), ("GET", f"/jobs/{RUNNING}/savepoints/{'e' * 32}", 404)):
        response = client.request(method, path)
        assert response.status_code == code, (path, response.text)
        assert isinstance(response.json()["errors"], list) and response.json()["errors"][0], response.text
    assert "already reached another terminal state (FINISHED)" in client.patch(f"/jobs/{FINISHED}", params={"mode": "cancel"}).json()["errors"][0]


def test_failure_cause_is_a_java_serialized_throwable(tmp_path):
    """The JVM reads the object stream back as Flink's SerializedThrowable would be read (class descriptors, fields, strings)."""
    if shutil.which("java") is None:
        pytest.skip("no java on PATH: the object stream cannot be read back by a JVM here")
    message = "savepoint failed: disk é full ☃ \U0001f600"
    stream = serialized_throwable("org.apache.flink.util.FlinkException", message, "trace")
    assert stream.startswith(b"\xac\xed\x00\x05") and base64.b64decode(base64.b64encode(stream)) == stream
    # A Java source-file program with the JDK's own classes only: the stream names a Flink class,
    # so read its class descriptors and string fields without resolving the class.
    program = tmp_path / "Read.java"
    program.write_text(
        "import java.io.*;\n"
        "public class Read { public static void main(String[] a) throws Exception {\n"
        "  ObjectInputStream in = new ObjectInputStream(new FileInputStream(a[0])) {\n"
        "    protected Class<?> resolveClass(ObjectStreamClass d) throws IOException, ClassNotFoundException {\n"
        "      return d.getName().endsWith(\".SerializedThrowable\") ? SerializedThrowable.class : super.resolveClass(d); } };\n"
        "  SerializedThrowable s = (SerializedThrowable) in.readObject();\n"
        "  System.out.print(s.originalErrorClassName + \"|\" + s.getMessage() + \"|\" + s.fullStringifiedStackTrace); } }\n"
        "class SerializedThrowable extends Exception { private static final long serialVersionUID = 7284183123441947635L;\n"
        "  byte[] serializedException; String originalErrorClassName; String fullStringifiedStackTrace; }\n"
    )
    (tmp_path / "stream.bin").write_bytes(stream)
    result = subprocess.run(["java", str(program), str(tmp_path / "stream.bin")], capture_output=True, text=True, timeout=120, check=False)
    if result.returncode != 0 and "jdk.compiler" in result.stderr:
        pytest.skip("this Java cannot run source files (no jdk.compiler module)")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"org.apache.flink.util.FlinkException|{message}|trace"
