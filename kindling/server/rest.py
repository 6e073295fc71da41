"""The job manager's REST API: Flink's v1 routes and JSON field names, a submit route, /metrics and the dashboard."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import Any, Optional

from fastapi import Body, FastAPI, HTTPException, Query, Request
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field

import kindling
from kindling.options import OptionError
from kindling.runtime.metrics import JOB_METRICS
from kindling.runtime.savepoints import SavepointError
from kindling.server import prometheus
from kindling.server.jobmanager import JobManager, JobNotFound, Operation, TriggerNotFound
from kindling.server.store import JOB_STATES, JobRecord, now_ms

STATIC = Path(__file__).with_name("static")
JOB_ID = re.compile(r"^[0-9a-f]{32}$")

# Flink's execution states for a job's vertices (here: one per sink query).
_VERTEX_STATE = {
    "CREATED": "CREATED", "RUNNING": "RUNNING", "FAILING": "FAILED", "CANCELLING": "CANCELING",
    "RESTARTING": "DEPLOYING", "CANCELED": "CANCELED", "FINISHED": "FINISHED", "FAILED": "FAILED",
}
_TASK_STATES = ("CREATED", "SCHEDULED", "DEPLOYING", "RUNNING", "FINISHED", "CANCELING", "CANCELED", "FAILED", "RECONCILING", "INITIALIZING", "PENDING")


class SubmitRequest(BaseModel):
    """kindling's submit route: Flink's jar-run body, with a program file instead of a jar."""

    model_config = ConfigDict(populate_by_name=True)
    file: str = Field(description="A Python pipeline file (.py) or a SQL file (.sql), on the job manager's machine")
    programArgsList: list[str] = Field(default_factory=list)
    savepointPath: Optional[str] = None
    allowNonRestoredState: bool = False
    parallelism: Optional[int] = None
    flinkConfiguration: dict[str, Any] = Field(default_factory=dict)
    cwd: Optional[str] = Field(default=None, description="Directory relative paths are resolved against")


class StopRequest(BaseModel):
    targetDirectory: Optional[str] = None
    drain: bool = False


class SavepointRequest(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    target_directory: Optional[str] = Field(default=None, alias="target-directory")
    cancel_job: bool = Field(default=False, alias="cancel-job")


class DisposalRequest(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    savepoint_path: str = Field(alias="savepoint-path")


def _vertex_id(jid: str, uid: str) -> str:
    return hashlib.md5(f"{jid}/{uid}".encode()).hexdigest()


def _stats(values: list[float]) -> dict[str, float]:
    if not values:
        return {k: 0 for k in ("min", "max", "avg", "p50", "p90", "p95", "p99", "p999")}
    ordered = sorted(values)

    def pct(p: float) -> float:
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]

    return {
        "min": ordered[0], "max": ordered[-1], "avg": sum(ordered) / len(ordered),
        "p50": pct(0.5), "p90": pct(0.9), "p95": pct(0.95), "p99": pct(0.99), "p999": pct(0.999),
    }


def create_app(manager: JobManager) -> FastAPI:
    """The FastAPI application serving ``manager``."""
    app = FastAPI(
        title="kindling job manager",
        version=kindling.__version__,
        description="Flink's REST API (v1) for kindling jobs running on Apache Spark.",
    )

    @app.exception_handler(HTTPException)
    async def flink_errors(request: Request, exc: HTTPException) -> JSONResponse:
        return JSONResponse({"errors": [str(exc.detail)]}, status_code=exc.status_code)

    @app.exception_handler(JobNotFound)
    async def job_not_found(request: Request, exc: JobNotFound) -> JSONResponse:
        return JSONResponse({"errors": [str(exc)]}, status_code=404)

    @app.exception_handler(TriggerNotFound)
    async def trigger_not_found(request: Request, exc: TriggerNotFound) -> JSONResponse:
        return JSONResponse({"errors": [str(exc)]}, status_code=404)

    @app.exception_handler(ValueError)
    async def bad_request(request: Request, exc: ValueError) -> JSONResponse:
        return JSONResponse({"errors": [str(exc)]}, status_code=400)

    from fastapi.exceptions import RequestValidationError

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"errors": [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]}, status_code=400)

    def job(jid: str) -> JobRecord:
        if not JOB_ID.match(jid):
            raise HTTPException(400, f"'{jid}' is not a job id (32 hexadecimal characters)")
        return manager.job(jid)

    def queries(record: JobRecord) -> dict[str, Any]:
        return manager.status(record.jid).get("queries") or {}

    def vertices(record: JobRecord) -> list[dict[str, Any]]:
        state = _VERTEX_STATE.get(record.state, "CREATED")
        parallelism = record.parallelism or int(manager.status(record.jid).get("configuration", {}).get("parallelism.default") or os.cpu_count() or 1)
        result = []
        for uid, query in queries(record).items():
            points = query.get("points") or []
            tasks = {s: 0 for s in _TASK_STATES}
            tasks[state] = parallelism
            result.append({
                "id": _vertex_id(record.jid, uid),
                "name": query.get("name", uid),
                "uid": uid,
                "maxParallelism": -1,
                "parallelism": parallelism,
                "status": state,
                "start-time": record.start_time,
                "end-time": record.end_time,
                "duration": record.duration(),
                "tasks": tasks,
                "metrics": {
                    "read-bytes": 0, "read-bytes-complete": True,
                    "write-bytes": 0, "write-bytes-complete": True,
                    "read-records": sum(p.get("numRecordsIn") or 0 for p in points), "read-records-complete": True,
                    "write-records": sum(p.get("numRecordsOut") or 0 for p in points), "write-records-complete": True,
                    "accumulated-backpressured-time": 0, "accumulated-idle-time": 0,
                    "accumulated-busy-time": sum(p.get("batchDuration") or 0 for p in points),
                },
                "checkpoint": query.get("checkpoint"),
            })
        return result

    def overview(record: JobRecord) -> dict[str, Any]:
        tasks = {s.lower(): 0 for s in _TASK_STATES}
        for vertex in vertices(record):
            tasks[vertex["status"].lower()] += 1
        return {
            "jid": record.jid,
            "name": record.name,
            "state": record.state,
            "start-time": record.start_time,
            "end-time": record.end_time,
            "duration": record.duration(),
            "last-modification": max(record.timestamps.values(), default=record.start_time),
            "tasks": {"total": sum(tasks.values()), **tasks},
        }

    # --- cluster ---------------------------------------------------------------------------------
    @app.get("/config", summary="Dashboard configuration")
    def get_config() -> dict[str, Any]:
        return {
            "refresh-interval": 3000,
            "timezone-name": "Coordinated Universal Time",
            "timezone-offset": 0,
            "flink-version": f"kindling {kindling.__version__}",
            "flink-revision": "kindling",
            "features": {"web-submit": False, "web-cancel": True, "web-rescale": False, "web-history": False},
        }

    @app.get("/overview", summary="Cluster overview")
    def get_overview() -> dict[str, Any]:
        records = manager.store.all()
        running = [r for r in records if not r.terminal]
        drivers = [s for s in manager.supervisors.values() if not s.record.terminal]
        return {
            "taskmanagers": len(drivers),
            "slots-total": sum(r.parallelism or 1 for r in running),
            "slots-available": 0,
            "jobs-running": len(running),
            "jobs-finished": sum(r.state == "FINISHED" for r in records),
            "jobs-cancelled": sum(r.state == "CANCELED" for r in records),
            "jobs-failed": sum(r.state == "FAILED" for r in records),
            "flink-version": f"kindling {kindling.__version__}",
            "flink-commit": "kindling",
        }

    @app.get("/taskmanagers", summary="Task managers: one Spark driver process per running job")
    def get_taskmanagers() -> dict[str, Any]:
        result = []
        for supervisor in manager.supervisors.values():
            record = supervisor.record
            if record.terminal or not record.driver_pid:
                continue
            status = supervisor.status if supervisor.status.get("pid") == record.driver_pid else {}
            slots = record.parallelism or int((status.get("configuration") or {}).get("parallelism.default") or os.cpu_count() or 1)
            resource = {"cpuCores": float(slots), "taskHeapMemory": 0, "taskOffHeapMemory": 0, "managedMemory": 0, "networkMemory": 0, "extendedResources": {}}
            result.append({
                "id": f"driver-{record.jid[:8]}-{record.driver_pid}",
                "path": f"pid://{record.driver_pid}",
                "dataPort": -1,
                "jmxPort": -1,
                "timeSinceLastHeartbeat": now_ms() - int(status.get("updated") or record.start_time),
                "slotsNumber": slots,
                "freeSlots": 0,
                "totalResource": resource,
                "freeResource": {**resource, "cpuCores": 0.0},
                "hardware": {"cpuCores": os.cpu_count() or 1, "physicalMemory": _memory("MemTotal"), "freeMemory": _memory("MemAvailable"), "managedMemory": 0},
                "memoryConfiguration": {},
                "blocked": False,
                "jobId": record.jid,
                "pid": record.driver_pid,
            })
        return {"taskmanagers": result}

    # --- jobs ----------------------------------------------------------------------------------
    @app.get("/jobs", summary="Job ids and states")
    def get_jobs() -> dict[str, Any]:
        return {"jobs": [{"id": r.jid, "status": r.state} for r in manager.store.all()]}

    @app.get("/jobs/overview", summary="Overview of every job")
    def get_jobs_overview() -> dict[str, Any]:
        return {"jobs": [overview(r) for r in manager.store.all()]}

    @app.get("/jobs/metrics", summary="Job metrics aggregated over jobs")
    def get_jobs_metrics(get: Optional[str] = None, agg: Optional[str] = None, jobs: Optional[str] = None) -> list[dict[str, Any]]:
        wanted = [j for j in (jobs or "").split(",") if j] or [r.jid for r in manager.store.all()]
        values = [manager.metrics(job(j).jid) for j in wanted]
        if not get:
            return [{"id": name} for name in JOB_METRICS]
        kinds = [a for a in (agg or "min,max,avg,sum").split(",") if a]
        result = []
        for name in get.split(","):
            numbers = [v[name] for v in values if v.get(name) is not None]
            if name not in JOB_METRICS or not numbers:
                continue
            entry: dict[str, Any] = {"id": name}
            aggregates = {"min": min(numbers), "max": max(numbers), "avg": sum(numbers) / len(numbers), "sum": sum(numbers)}
            for kind in kinds:
                if kind in aggregates:
                    entry[kind] = aggregates[kind]
            result.append(entry)
        return result

    @app.post("/kindling/run", summary="Submit a Python pipeline file or a SQL file (kindling's jar-run)")
    def submit(request: SubmitRequest) -> dict[str, str]:
        try:
            record = manager.submit(
                request.file,
                request.programArgsList,
                request.cwd,
                request.savepointPath,
                request.allowNonRestoredState,
                request.parallelism,
                request.flinkConfiguration,
            )
        except (OptionError, SavepointError) as exc:
            raise HTTPException(400, str(exc)) from None
        return {"jobid": record.jid}

    @app.get("/jobs/{jid}", summary="Job details")
    def get_job(jid: str) -> dict[str, Any]:
        record = job(jid)
        found = vertices(record)
        counts = {s: 0 for s in _TASK_STATES}
        for vertex in found:
            counts[vertex["status"]] += 1
        return {
            "jid": record.jid,
            "name": record.name,
            "isStoppable": not record.terminal,
            "state": record.state,
            "job-type": "STREAMING",
            "start-time": record.start_time,
            "end-time": record.end_time,
            "duration": record.duration(),
            "maxParallelism": -1,
            "now": now_ms(),
            "timestamps": {state: record.timestamps.get(state, 0) for state in JOB_STATES},
            "vertices": found,
            "status-counts": counts,
            "plan": {
                "jid": record.jid,
                "name": record.name,
                "type": "STREAMING",
                "nodes": [
                    {"id": v["id"], "parallelism": v["parallelism"], "operator": "", "operator_strategy": "", "description": v["name"], "inputs": [], "optimizer_properties": {}}
                    for v in found
                ],
            },
            "program": {"file": record.file, "args": record.args, "kind": record.kind},
            "savepointPath": record.savepoint_path,
            "lastSavepoint": record.last_savepoint,
            "checkpointDir": record.checkpoint_dir,
        }

    @app.patch("/jobs/{jid}", status_code=202, summary="Cancel a job (mode=cancel)")
    def patch_job(jid: str, mode: str = Query("cancel")) -> Response:
        record = job(jid)
        if mode != "cancel":
            raise HTTPException(400, f"mode '{mode}' is not supported: use mode=cancel")
        manager.cancel(record.jid)
        return Response(status_code=202, content="{}", media_type="application/json")

    @app.post("/jobs/{jid}/stop", status_code=202, summary="Stop a job with a savepoint; it ends FINISHED")
    def stop_job(jid: str, request: StopRequest = Body(default_factory=StopRequest)) -> dict[str, str]:
        record = job(jid)
        operation = manager.trigger(record.jid, "stop", request.targetDirectory, request.drain)
        return {"request-id": operation.id}

    @app.post("/jobs/{jid}/savepoints", status_code=202, summary="Trigger a savepoint")
    def trigger_savepoint(jid: str, request: SavepointRequest = Body(default_factory=SavepointRequest)) -> dict[str, str]:
        record = job(jid)
        operation = manager.trigger(record.jid, "stop" if request.cancel_job else "savepoint", request.target_directory)
        return {"request-id": operation.id}

    def operation_status(operation: Operation) -> dict[str, Any]:
        if operation.status == "IN_PROGRESS":
            return {"status": {"id": "IN_PROGRESS"}, "operation": None}
        if operation.failure:
            cause = {"class": "org.apache.flink.util.FlinkException", "stack-trace": operation.failure, "serialized-throwable": operation.failure}
            return {"status": {"id": "COMPLETED"}, "operation": {"failure-cause": cause}}
        body: dict[str, Any] = {"location": operation.location} if operation.location else {}
        return {"status": {"id": "COMPLETED"}, "operation": body}

    @app.get("/jobs/{jid}/savepoints/{trigger_id}", summary="Status of a savepoint or stop-with-savepoint")
    def savepoint_status(jid: str, trigger_id: str) -> dict[str, Any]:
        record = job(jid)
        return operation_status(manager.operation(trigger_id, record.jid))

    @app.post("/savepoint-disposal", status_code=202, summary="Dispose of a savepoint")
    def dispose(request: DisposalRequest) -> dict[str, str]:
        return {"request-id": manager.dispose(request.savepoint_path).id}

    @app.get("/savepoint-disposal/{trigger_id}", summary="Status of a savepoint disposal")
    def disposal_status(trigger_id: str) -> dict[str, Any]:
        return operation_status(manager.operation(trigger_id))

    @app.get("/jobs/{jid}/checkpoints", summary="Checkpoint statistics: one checkpoint per micro-batch")
    def get_checkpoints(jid: str) -> dict[str, Any]:
        record = job(jid)
        history = []
        completed = 0
        for uid, query in queries(record).items():
            completed += int(query.get("lastCommittedBatch", -1)) + 1
            for point in query.get("points") or []:
                history.append({
                    "@class": "completed",
                    "id": point["batchId"],
                    "status": "COMPLETED",
                    "is_savepoint": False,
                    "savepointFormat": None,
                    "trigger_timestamp": point.get("timestamp") or 0,
                    "latest_ack_timestamp": (point.get("timestamp") or 0) + point.get("batchDuration", 0),
                    "checkpointed_size": point.get("stateBytes", 0),
                    "state_size": point.get("stateBytes", 0),
                    "end_to_end_duration": point.get("batchDuration", 0),
                    "alignment_buffered": 0,
                    "processed_data": point.get("numRecordsIn", 0),
                    "persisted_data": 0,
                    "num_subtasks": 1,
                    "num_acknowledged_subtasks": 1,
                    "checkpoint_type": "CHECKPOINT",
                    "tasks": {},
                    "external_path": query.get("checkpoint"),
                    "discarded": False,
                    "operator": uid,
                })
        history.sort(key=lambda c: c["trigger_timestamp"], reverse=True)
        savepoint = None
        if record.savepoints:
            last = record.savepoints[-1]
            savepoint = {
                "@class": "completed", "id": last["id"], "status": "COMPLETED", "is_savepoint": True,
                "savepointFormat": "CANONICAL", "trigger_timestamp": last["timestamp"], "latest_ack_timestamp": last["timestamp"],
                "checkpointed_size": 0, "state_size": 0, "end_to_end_duration": 0, "alignment_buffered": 0,
                "processed_data": 0, "persisted_data": 0, "num_subtasks": 1, "num_acknowledged_subtasks": 1,
                "checkpoint_type": "SAVEPOINT", "tasks": {}, "external_path": last["location"], "discarded": False,
            }
        restored = None
        if record.savepoint_path:
            restored = {"id": 0, "restore_timestamp": record.timestamps.get("RUNNING", record.start_time), "is_savepoint": True, "external_path": record.savepoint_path}
        return {
            "counts": {"restored": int(bool(record.savepoint_path)) + record.restarts, "total": completed, "in_progress": 0, "completed": completed, "failed": 0},
            "summary": {
                "checkpointed_size": _stats([c["checkpointed_size"] for c in history]),
                "state_size": _stats([c["state_size"] for c in history]),
                "end_to_end_duration": _stats([c["end_to_end_duration"] for c in history]),
                "alignment_buffered": _stats([0 for _ in history]),
                "processed_data": _stats([c["processed_data"] for c in history]),
                "persisted_data": _stats([0 for _ in history]),
            },
            "latest": {"completed": history[0] if history else None, "savepoint": savepoint, "failed": None, "restored": restored},
            "history": history,
        }

    @app.get("/jobs/{jid}/exceptions", summary="Exceptions history of a job")
    def get_exceptions(jid: str, maxExceptions: int = 20) -> dict[str, Any]:
        record = job(jid)
        entries = [
            {
                "exceptionName": e["exceptionName"],
                "stacktrace": e.get("stacktrace") or e["message"],
                "message": e["message"],
                "timestamp": e["timestamp"],
                "taskName": e.get("taskName"),
                "endpoint": None,
                "taskManagerId": None,
                "failureLabels": {},
                "concurrentExceptions": [],
            }
            for e in sorted(record.exceptions, key=lambda e: e["timestamp"], reverse=True)
        ]
        shown = entries[:maxExceptions]
        root = shown[0] if shown else None
        return {
            "root-exception": root["stacktrace"] if root else None,
            "timestamp": root["timestamp"] if root else None,
            "all-exceptions": [],
            "truncated": len(entries) > len(shown),
            "exceptionHistory": {"entries": shown, "truncated": len(entries) > len(shown)},
        }

    @app.get("/jobs/{jid}/metrics", summary="Job metrics")
    def get_job_metrics(jid: str, get: Optional[str] = None) -> list[dict[str, Any]]:
        record = job(jid)
        values: dict[str, Any] = {**manager.metrics(record.jid), **manager.user_metrics(record.jid)}
        if not get:
            return [{"id": name} for name in [*JOB_METRICS, *sorted(k for k in values if k not in JOB_METRICS)]]
        return [{"id": name, "value": str(values[name])} for name in get.split(",") if values.get(name) is not None]

    @app.get("/kindling/jobs/{jid}/timeline", summary="Per-batch points of each query, for the dashboard's plots")
    def get_timeline(jid: str) -> dict[str, Any]:
        record = job(jid)
        return {
            "jid": record.jid,
            "queries": {uid: {"name": q.get("name", uid), "points": q.get("points") or []} for uid, q in queries(record).items()},
        }

    # --- Prometheus and the dashboard -------------------------------------------------------
    @app.get("/metrics", response_class=PlainTextResponse, summary="Metrics in Prometheus' text format")
    def get_prometheus() -> Response:
        return Response(prometheus.render(manager), media_type=prometheus.CONTENT_TYPE)

    @app.get("/", include_in_schema=False)
    def dashboard() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    return app


def _memory(key: str) -> int:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


