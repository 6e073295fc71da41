"""The job manager's REST API: Flink's v1 routes and JSON field names, a submit route, /metrics and the dashboard."""

from __future__ import annotations

import os
import platform
import re
import sys
from pathlib import Path
from typing import Any, Optional

from fastapi import Body, FastAPI, HTTPException, Query, Request
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

import kindling
from kindling import config as cfg
from kindling.config import Configuration
from kindling.options import OptionError
from kindling.runtime.metrics import JOB_METRICS, current_watermark
from kindling.runtime.savepoints import SavepointError
from kindling.server import prometheus
from kindling.server.jobmanager import (
    JobManager,
    JobNotFound,
    Operation,
    TriggerNotFound,
)
from kindling.server.rest_models import (
    APPLICATION_STATE,
    JOB_STATUSES,
    VERTEX_STATE,
    AggregatedMetric,
    ApplicationDetails,
    AsynchronousOperationResult,
    CheckpointConfigInfo,
    CheckpointCounts,
    CheckpointingStatistics,
    CheckpointStatisticsSummary,
    ClusterOverviewWithVersion,
    CompletedCheckpointStatistics,
    ConfigurationInfoEntry,
    DashboardConfiguration,
    EnvironmentInfo,
    ExternalizedCheckpointInfo,
    Features,
    HardwareDescription,
    IOMetricsInfo,
    JobDetails,
    JobDetailsInfo,
    JobExceptionHistory,
    JobExceptionsInfoWithHistory,
    JobIdsWithStatusOverview,
    JobIdWithStatus,
    JobPlan,
    JobVertexDetailsInfo,
    JVMInfo,
    LatestCheckpoints,
    Metric,
    MultipleApplicationsDetails,
    MultipleJobsDetails,
    PlanNode,
    PlanNodeInput,
    QueueStatus,
    ResourceProfileInfo,
    RestoredCheckpointStatistics,
    RootExceptionInfo,
    SavepointInfo,
    SerializedThrowable,
    StatsSummaryDto,
    TaskManagerInfo,
    TaskManagersInfo,
    TriggerResponse,
    flink_id,
    task_counts,
)
from kindling.server.store import JobRecord, now_ms
from kindling.server.throwable import failure_cause

STATIC = Path(__file__).with_name("static")
JOB_ID = re.compile(r"^[0-9a-f]{32}$")

# The Flink version kindling's REST API speaks: Flink's clients of this version read its responses.
FLINK_VERSION = "2.3.0"


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
    triggerId: Optional[str] = None


class SavepointRequest(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    target_directory: Optional[str] = Field(default=None, alias="target-directory")
    cancel_job: bool = Field(default=False, alias="cancel-job")
    trigger_id: Optional[str] = Field(default=None, alias="triggerId")


class DisposalRequest(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    savepoint_path: str = Field(alias="savepoint-path")


def _stats(values: list[float]) -> StatsSummaryDto:
    if not values:
        return StatsSummaryDto(min=0, max=0, avg=0, p50=0.0, p90=0.0, p95=0.0, p99=0.0, p999=0.0)
    ordered = sorted(values)

    def pct(p: float) -> float:
        return float(ordered[min(len(ordered) - 1, int(p * len(ordered)))])

    return StatsSummaryDto(
        min=int(ordered[0]), max=int(ordered[-1]), avg=int(sum(ordered) / len(ordered)),
        p50=pct(0.5), p90=pct(0.9), p95=pct(0.95), p99=pct(0.99), p999=pct(0.999),
    )


def _interval_ms(configuration: dict[str, Any]) -> int:
    """The trigger interval (``execution.checkpointing.interval``) in milliseconds."""
    try:
        value = Configuration({k: str(v) for k, v in configuration.items()}).get(cfg.CHECKPOINTING_INTERVAL)
    except ValueError:
        value = cfg.CHECKPOINTING_INTERVAL.default
    return int(value.total_seconds() * 1000) if value else 0


def _time_split(points: list[dict[str, Any]], interval_ms: int, source: bool) -> dict[str, float]:
    """Busy, back-pressured and idle milliseconds of a vertex over the recent micro-batches.

    A micro-batch is planned every trigger interval. While it runs the vertex is busy; what is left
    of the interval it is idle. A batch longer than the interval holds the sources back: the next
    batch cannot start on time, which is the back-pressure a Flink source would see, so a source's
    time beyond the interval counts as back-pressured instead of busy.
    """
    busy = backpressured = idle = 0.0
    for point in points:
        duration = float(point.get("batchDuration") or 0)
        span = max(duration, float(interval_ms))
        if source:
            busy += min(duration, span if not interval_ms else interval_ms)
            backpressured += max(0.0, duration - interval_ms) if interval_ms else 0.0
        else:
            busy += duration
        idle += span - duration
    return {"busy": busy, "backpressured": backpressured, "idle": idle, "total": busy + backpressured + idle}


def _vertex_times(
    points: list[dict[str, Any]], interval: int, source: bool, watermark: Optional[int]
) -> tuple[dict[str, float], dict[str, Optional[float]]]:
    """A vertex's accumulated times and Flink's per-second time metrics (busy, back-pressured, idle) with its watermark."""
    split = _time_split(points, interval, source)
    total = split["total"]
    per_second: dict[str, Optional[float]] = {
        "busyTimeMsPerSecond": 1000.0 * split["busy"] / total if total else 0.0,
        "backPressuredTimeMsPerSecond": 1000.0 * split["backpressured"] / total if total else 0.0,
        "idleTimeMsPerSecond": 1000.0 * split["idle"] / total if total else 0.0,
        "currentInputWatermark": float(watermark) if watermark is not None else None,
    }
    return split, per_second


def build_vertices(record: JobRecord, status: dict[str, Any], parallelism: int) -> list[JobVertexDetailsInfo]:
    """The job's vertices as Spark plans each query: its source, its stateful operators, its sink.

    Spark runs a query's stateless steps fused with its source (as Flink chains them); every
    stateful operator Spark reports (aggregation, join, deduplication, transformWithState) is a
    vertex of its own, behind a shuffle. Records in and out are Spark's per-micro-batch counts.
    """
    state = VERTEX_STATE.get(record.state, "CREATED")
    interval = _interval_ms(status.get("configuration") or record.configuration)
    result: list[JobVertexDetailsInfo] = []
    for uid, query in (status.get("queries") or {}).items():
        points = query.get("points") or []
        last = points[-1] if points else {}
        name = query.get("name", uid)
        records_in = sum(int(p.get("numRecordsIn") or 0) for p in points)
        outs = [p.get("numRecordsOut") for p in points]
        out_known = bool(points) and all(o is not None for o in outs)
        records_out = sum(int(o or 0) for o in outs)
        watermark = current_watermark(points)
        common = {
            "slot_sharing_group_id": flink_id(record.jid, "slot-sharing-group"),
            "max_parallelism": parallelism,
            "parallelism": parallelism,
            "status": state,
            "start_time": record.start_time,
            "end_time": record.end_time,
            "duration": record.duration(),
            "tasks": task_counts(state, parallelism),
            "query": uid,
        }

        split, per_second = _vertex_times(points, interval, True, watermark)
        result.append(JobVertexDetailsInfo(
            id=flink_id(record.jid, uid, "source"), name=f"Source: {name}", kind="source",
            metrics=IOMetricsInfo(
                write_records=records_in,
                accumulated_busy_time=split["busy"], accumulated_backpressured_time=int(split["backpressured"]),
                accumulated_idle_time=int(split["idle"]),
            ),
            kindling_metrics={**per_second, "numRecordsOut": float(records_in),
                              "numRecordsOutPerSecond": float(last.get("numRecordsInPerSecond") or 0.0)},
            **common,
        ))
        split, per_second = _vertex_times(points, interval, False, watermark)
        for index, operator in enumerate(last.get("stateOperators") or []):
            result.append(JobVertexDetailsInfo(
                id=flink_id(record.jid, uid, "operator", str(index)), name=str(operator), kind="operator",
                # Spark reports no per-operator row counts: Flink's "-complete" flags say so.
                metrics=IOMetricsInfo(
                    read_records_complete=False, write_records_complete=False,
                    accumulated_busy_time=split["busy"], accumulated_idle_time=int(split["idle"]),
                ),
                kindling_metrics={**per_second, "stateRows": float(last.get("stateRows") or 0), "stateBytes": float(last.get("stateBytes") or 0)},
                **common,
            ))
        result.append(JobVertexDetailsInfo(
            id=flink_id(record.jid, uid, "sink"), name=f"Sink: {name}", kind="sink",
            metrics=IOMetricsInfo(
                read_records=records_out, read_records_complete=out_known,
                accumulated_busy_time=split["busy"], accumulated_idle_time=int(split["idle"]),
            ),
            kindling_metrics={**per_second, "numRecordsIn": float(records_out) if out_known else None,
                              "numRecordsInPerSecond": float(last.get("numRecordsOutPerSecond") or 0.0)},
            **common,
        ))
    return result


def build_plan(record: JobRecord, vertices: list[JobVertexDetailsInfo]) -> JobPlan:
    """Flink's JSON plan: each query's vertices in a line, source to sink, shuffles before stateful operators."""
    nodes: list[PlanNode] = []
    previous: dict[str, str] = {}
    for vertex in vertices:
        inputs = []
        if vertex.kind != "source" and vertex.query in previous:
            strategy = "HASH" if vertex.kind == "operator" else "FORWARD"
            inputs.append(PlanNodeInput(num=0, id=previous[vertex.query], ship_strategy=strategy, exchange="pipelined_bounded"))
        previous[vertex.query] = vertex.id
        nodes.append(PlanNode(id=vertex.id, parallelism=vertex.parallelism, operator="", operator_strategy="", description=vertex.name,
                              inputs=inputs))
    return JobPlan(jid=record.jid, name=record.name, type="STREAMING", nodes=nodes)


def create_app(manager: JobManager) -> FastAPI:
    """The FastAPI application serving ``manager``."""
    app = FastAPI(
        title="kindling job manager",
        version=kindling.__version__,
        description="Flink's REST API (v1) for kindling jobs running on Apache Spark.",
    )

    @app.middleware("http")
    async def versioned(request: Request, call_next: Any) -> Response:
        # Flink's clients call /v1/<route>; the unversioned routes are the same API.
        path = request.scope["path"]
        if path == "/v1" or path.startswith("/v1/"):
            request.scope["path"] = path[3:] or "/"
            request.scope["raw_path"] = request.scope["path"].encode()
        return await call_next(request)

    @app.exception_handler(StarletteHTTPException)
    async def flink_errors(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        detail = exc.detail if exc.status_code != 404 or isinstance(exc, HTTPException) else f"Not found: {request.url.path}"
        return JSONResponse({"errors": [str(detail)]}, status_code=exc.status_code)

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

    def parallelism_of(record: JobRecord, status: dict[str, Any]) -> int:
        return record.parallelism or int((status.get("configuration") or {}).get("parallelism.default") or os.cpu_count() or 1)

    def vertices(record: JobRecord) -> list[JobVertexDetailsInfo]:
        status = manager.status(record.jid)
        return build_vertices(record, status, parallelism_of(record, status))

    def job_state(record: JobRecord) -> str:
        return record.state if record.state in JOB_STATUSES else "CREATED"

    def details(record: JobRecord) -> JobDetails:
        tasks = task_counts(lowercase=True)
        for vertex in vertices(record):
            tasks[vertex.status.lower()] += vertex.parallelism
        return JobDetails(
            jid=record.jid, name=record.name, state=job_state(record),
            start_time=record.start_time, end_time=record.end_time, duration=record.duration(),
            last_modification=max(record.timestamps.values(), default=record.start_time),
            tasks={"total": sum(tasks.values()), **tasks},
        )

    def application(record: JobRecord) -> ApplicationDetails:
        jobs = {s: 0 for s in JOB_STATUSES}
        jobs[job_state(record)] += 1
        return ApplicationDetails(
            id=flink_id("application", record.jid), name=record.name, start_time=record.start_time, end_time=record.end_time,
            duration=record.duration(), status=APPLICATION_STATE.get(record.state, "CREATED"), jobs=jobs,
        )

    # --- cluster ---------------------------------------------------------------------------------
    @app.get("/config", summary="Dashboard configuration", response_model=DashboardConfiguration)
    def get_config() -> DashboardConfiguration:
        return DashboardConfiguration(
            refresh_interval=3000, timezone_name="Coordinated Universal Time", timezone_offset=0,
            flink_version=FLINK_VERSION, flink_revision=f"kindling {kindling.__version__}",
            features=Features(web_submit=False, web_cancel=True, web_rescale=False, web_history=False),
        )

    @app.get("/overview", summary="Cluster overview", response_model=ClusterOverviewWithVersion)
    def get_overview() -> ClusterOverviewWithVersion:
        records = manager.store.all()
        running = [r for r in records if not r.terminal]
        drivers = [s for s in manager.supervisors.values() if not s.record.terminal]
        executors = sum(len(s.status.get("executors") or []) for s in drivers)
        return ClusterOverviewWithVersion(
            taskmanagers=len(drivers) + executors, slots_total=sum(r.parallelism or 1 for r in running), slots_available=0,
            jobs_running=len(running), jobs_finished=sum(r.state == "FINISHED" for r in records),
            jobs_cancelled=sum(r.state == "CANCELED" for r in records), jobs_failed=sum(r.state == "FAILED" for r in records),
            flink_version=FLINK_VERSION, flink_commit=f"kindling {kindling.__version__}",
        )

    @app.get("/jobmanager/config", summary="The job manager's configuration", response_model=list[ConfigurationInfoEntry])
    def get_jobmanager_config() -> list[ConfigurationInfoEntry]:
        values = {
            "rest.address": manager.address, "rest.port": str(manager.port), "jobmanager.rpc.address": manager.address,
            "web.tmpdir": str(manager.home), "kindling.jobmanager.home": str(manager.home), "kindling.version": kindling.__version__,
        }
        return [ConfigurationInfoEntry(key=k, value=v) for k, v in sorted(values.items())]

    @app.get("/jobmanager/environment", summary="The job manager's environment", response_model=EnvironmentInfo)
    def get_jobmanager_environment() -> EnvironmentInfo:
        return EnvironmentInfo(
            jvm=JVMInfo(version=f"Python {platform.python_version()} ({platform.python_implementation()})", arch=platform.machine(),
                        options=list(sys.orig_argv[1:])),
            classpath=list(sys.path),
        )

    @app.get("/taskmanagers", summary="Task managers: one Spark driver process per running job", response_model=TaskManagersInfo)
    def get_taskmanagers() -> TaskManagersInfo:
        result = []
        for supervisor in manager.supervisors.values():
            record = supervisor.record
            if record.terminal or not record.driver_pid:
                continue
            status = supervisor.status if supervisor.status.get("pid") == record.driver_pid else {}
            slots = parallelism_of(record, status)
            resource = ResourceProfileInfo(cpu_cores=float(slots))
            result.append(TaskManagerInfo(
                id=f"driver-{record.jid[:8]}-{record.driver_pid}", path=f"pid://{record.driver_pid}", data_port=-1, jmx_port=-1,
                time_since_last_heartbeat=now_ms() - int(status.get("updated") or record.start_time),
                slots_number=slots, free_slots=0, total_resource=resource, free_resource=ResourceProfileInfo(cpu_cores=0.0),
                hardware=HardwareDescription(cpu_cores=os.cpu_count() or 1, physical_memory=_memory("MemTotal"), free_memory=_memory("MemAvailable")),
                job_id=record.jid, pid=record.driver_pid, kind="driver",
            ))
            # On a cluster the executors run the tasks: Flink's task managers, as the driver last saw them.
            for executor in status.get("executors") or []:
                cores = int(executor.get("cores") or 1)
                result.append(TaskManagerInfo(
                    id=f"executor-{executor['host']}:{executor['port']}", path=f"spark-executor://{executor['host']}:{executor['port']}",
                    data_port=int(executor["port"]), jmx_port=-1,
                    time_since_last_heartbeat=now_ms() - int(status.get("updated") or record.start_time),
                    slots_number=cores, free_slots=max(0, cores - int(executor.get("runningTasks") or 0)),
                    total_resource=ResourceProfileInfo(cpu_cores=float(cores)),
                    free_resource=ResourceProfileInfo(cpu_cores=float(max(0, cores - int(executor.get("runningTasks") or 0)))),
                    hardware=HardwareDescription(cpu_cores=cores, physical_memory=-1, free_memory=-1,
                                                 managed_memory=int(executor.get("memory") or 0)),
                    job_id=record.jid, kind="executor", host=executor["host"],
                ))
        return TaskManagersInfo(taskmanagers=result)

    @app.get("/applications/overview", summary="Applications (Flink 2.x): one per submitted program", response_model=MultipleApplicationsDetails)
    def get_applications() -> MultipleApplicationsDetails:
        return MultipleApplicationsDetails(applications=[application(r) for r in manager.store.all()])

    # --- jobs ----------------------------------------------------------------------------------
    @app.get("/jobs", summary="Job ids and states", response_model=JobIdsWithStatusOverview)
    def get_jobs() -> JobIdsWithStatusOverview:
        return JobIdsWithStatusOverview(jobs=[JobIdWithStatus(id=r.jid, status=job_state(r)) for r in manager.store.all()])

    @app.get("/jobs/overview", summary="Overview of every job", response_model=MultipleJobsDetails)
    def get_jobs_overview() -> MultipleJobsDetails:
        return MultipleJobsDetails(jobs=[details(r) for r in manager.store.all()])

    @app.get("/jobs/metrics", summary="Job metrics aggregated over jobs", response_model=list[AggregatedMetric], response_model_exclude_none=True)
    def get_jobs_metrics(get: Optional[str] = None, agg: Optional[str] = None, jobs: Optional[str] = None) -> list[AggregatedMetric]:
        wanted = [j for j in (jobs or "").split(",") if j] or [r.jid for r in manager.store.all()]
        values = [manager.metrics(job(j).jid) for j in wanted]
        if not get:
            return [AggregatedMetric(id=name) for name in JOB_METRICS]
        kinds = [a.lower() for a in (agg or "min,max,avg,sum").split(",") if a]
        result = []
        for name in get.split(","):
            numbers = [v[name] for v in values if v.get(name) is not None]
            if name not in JOB_METRICS or not numbers:
                continue
            aggregates = {"min": min(numbers), "max": max(numbers), "avg": sum(numbers) / len(numbers), "sum": sum(numbers)}
            result.append(AggregatedMetric(id=name, **{k: aggregates[k] for k in kinds if k in aggregates}))
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

    @app.get("/jobs/{jid}", summary="Job details", response_model=JobDetailsInfo)
    def get_job(jid: str) -> JobDetailsInfo:
        record = job(jid)
        found = vertices(record)
        counts = task_counts()
        for vertex in found:
            counts[vertex.status] += 1
        return JobDetailsInfo(
            jid=record.jid, name=record.name, is_stoppable=not record.terminal, state=job_state(record),
            start_time=record.start_time, end_time=record.end_time, duration=record.duration(),
            max_parallelism=max((v.max_parallelism for v in found), default=-1), now=now_ms(),
            timestamps={state: record.timestamps.get(state, 0) for state in JOB_STATUSES},
            vertices=found, status_counts=counts, plan=build_plan(record, found),
            application_id=flink_id("application", record.jid),
            program={"file": record.file, "args": record.args, "kind": record.kind},
            savepoint_path=record.savepoint_path, last_savepoint=record.last_savepoint, checkpoint_dir=record.checkpoint_dir,
        )

    @app.patch("/jobs/{jid}", status_code=202, summary="Cancel a job (mode=cancel)")
    def patch_job(jid: str, mode: str = Query("cancel")) -> Response:
        record = job(jid)
        if mode.lower() != "cancel":
            raise HTTPException(400, f"mode '{mode}' is not supported: use mode=cancel (stop a job with POST /jobs/{jid}/stop)")
        if record.terminal:
            raise HTTPException(409, f"Job cancellation failed because the job has already reached another terminal state ({record.state}).")
        manager.cancel(record.jid)
        return Response(status_code=202, content="{}", media_type="application/json")

    @app.post("/jobs/{jid}/stop", status_code=202, summary="Stop a job with a savepoint; it ends FINISHED", response_model=TriggerResponse)
    def stop_job(jid: str, request: StopRequest = Body(default_factory=StopRequest)) -> TriggerResponse:
        record = job(jid)
        operation = manager.trigger(record.jid, "stop", request.targetDirectory, request.drain, request.triggerId)
        return TriggerResponse(request_id=operation.id)

    @app.post("/jobs/{jid}/savepoints", status_code=202, summary="Trigger a savepoint", response_model=TriggerResponse)
    def trigger_savepoint(jid: str, request: SavepointRequest = Body(default_factory=SavepointRequest)) -> TriggerResponse:
        record = job(jid)
        operation = manager.trigger(record.jid, "stop" if request.cancel_job else "savepoint", request.target_directory,
                                    trigger_id=request.trigger_id)
        return TriggerResponse(request_id=operation.id)

    def operation_status(operation: Operation) -> AsynchronousOperationResult:
        if operation.status == "IN_PROGRESS":
            return AsynchronousOperationResult(status=QueueStatus(id="IN_PROGRESS"))
        if operation.failure:
            cause = SerializedThrowable.model_validate(failure_cause(operation.failure))
            return AsynchronousOperationResult(status=QueueStatus(id="COMPLETED"), operation=SavepointInfo(failure_cause=cause))
        return AsynchronousOperationResult(status=QueueStatus(id="COMPLETED"), operation=SavepointInfo(location=operation.location))

    @app.get("/jobs/{jid}/savepoints/{trigger_id}", summary="Status of a savepoint or stop-with-savepoint",
             response_model=AsynchronousOperationResult, response_model_exclude_none=True)
    def savepoint_status(jid: str, trigger_id: str) -> AsynchronousOperationResult:
        record = job(jid)
        return operation_status(manager.operation(trigger_id, record.jid))

    @app.post("/savepoint-disposal", status_code=202, summary="Dispose of a savepoint", response_model=TriggerResponse)
    def dispose(request: DisposalRequest) -> TriggerResponse:
        return TriggerResponse(request_id=manager.dispose(request.savepoint_path).id)

    @app.get("/savepoint-disposal/{trigger_id}", summary="Status of a savepoint disposal",
             response_model=AsynchronousOperationResult, response_model_exclude_none=True)
    def disposal_status(trigger_id: str) -> AsynchronousOperationResult:
        return operation_status(manager.operation(trigger_id))

    @app.get("/jobs/{jid}/checkpoints", summary="Checkpoint statistics: one checkpoint per micro-batch", response_model=CheckpointingStatistics)
    def get_checkpoints(jid: str) -> CheckpointingStatistics:
        record = job(jid)
        status = manager.status(record.jid)
        parallelism = parallelism_of(record, status)
        history: list[CompletedCheckpointStatistics] = []
        completed = 0
        for uid, query in (status.get("queries") or {}).items():
            completed += int(query.get("lastCommittedBatch", -1)) + 1
            for point in query.get("points") or []:
                history.append(CompletedCheckpointStatistics(
                    id=point["batchId"], is_savepoint=False,
                    trigger_timestamp=point.get("timestamp") or 0,
                    latest_ack_timestamp=(point.get("timestamp") or 0) + int(point.get("batchDuration") or 0),
                    checkpointed_size=int(point.get("stateBytes") or 0), state_size=int(point.get("stateBytes") or 0),
                    end_to_end_duration=int(point.get("batchDuration") or 0), processed_data=int(point.get("numRecordsIn") or 0),
                    num_subtasks=parallelism, num_acknowledged_subtasks=parallelism, checkpoint_type="CHECKPOINT",
                    external_path=query.get("checkpoint"), operator=uid,
                ))
        history.sort(key=lambda c: c.trigger_timestamp, reverse=True)
        savepoint = None
        if record.savepoints:
            last = record.savepoints[-1]
            savepoint = CompletedCheckpointStatistics(
                id=last["id"], is_savepoint=True, savepoint_format="CANONICAL", trigger_timestamp=last["timestamp"],
                latest_ack_timestamp=last["timestamp"], checkpointed_size=0, state_size=0, end_to_end_duration=0,
                processed_data=0, num_subtasks=parallelism, num_acknowledged_subtasks=parallelism,
                checkpoint_type="SYNC_SAVEPOINT" if last.get("kind") == "stop" else "SAVEPOINT", external_path=last["location"],
            )
        restored = None
        if record.savepoint_path:
            restored = RestoredCheckpointStatistics(
                id=0, restore_timestamp=record.timestamps.get("RUNNING", record.start_time), is_savepoint=True, external_path=record.savepoint_path,
            )
        return CheckpointingStatistics(
            counts=CheckpointCounts(restored=int(bool(record.savepoint_path)) + record.restarts, total=completed, in_progress=0,
                                    completed=completed, failed=0),
            summary=CheckpointStatisticsSummary(
                checkpointed_size=_stats([c.checkpointed_size for c in history]),
                state_size=_stats([c.state_size for c in history]),
                end_to_end_duration=_stats([c.end_to_end_duration for c in history]),
                alignment_buffered=_stats([0 for _ in history]),
                processed_data=_stats([c.processed_data for c in history]),
                persisted_data=_stats([0 for _ in history]),
            ),
            latest=LatestCheckpoints(completed=history[0] if history else None, savepoint=savepoint, restored=restored),
            history=history,
        )

    @app.get("/jobs/{jid}/checkpoints/config", summary="Checkpoint configuration: a checkpoint per micro-batch", response_model=CheckpointConfigInfo)
    def get_checkpoint_config(jid: str) -> CheckpointConfigInfo:
        record = job(jid)
        values = {str(k): str(v) for k, v in ((manager.status(record.jid).get("configuration")) or record.configuration).items()}
        try:
            conf = Configuration(values)
        except ValueError:
            conf = Configuration(record.configuration)
        return CheckpointConfigInfo(
            # Each micro-batch commits its offsets, state and (for transactional sinks) output together.
            mode="exactly_once", interval=_interval_ms(values), timeout=600_000, min_pause=0, max_concurrent=1,
            # Spark keeps its checkpoint (offset log, state store) when a query stops: always externalized.
            externalization=ExternalizedCheckpointInfo(enabled=True, delete_on_cancellation=False),
            state_backend=str(conf.get(cfg.STATE_BACKEND)), checkpoint_storage=f"FileSystemCheckpointStorage ({record.checkpoint_dir})",
            unaligned_checkpoints=False, tolerable_failed_checkpoints=0, aligned_checkpoint_timeout=0,
            checkpoints_after_tasks_finish=True, state_changelog_enabled=False, changelog_periodic_materialization_interval=0,
            changelog_storage="memory",
        )

    @app.get("/jobs/{jid}/exceptions", summary="Exceptions history of a job", response_model=JobExceptionsInfoWithHistory)
    def get_exceptions(jid: str, maxExceptions: int = 20) -> JobExceptionsInfoWithHistory:
        record = job(jid)
        entries = [
            RootExceptionInfo(
                exception_name=e["exceptionName"], stacktrace=e.get("stacktrace") or e["message"], message=e["message"],
                timestamp=e["timestamp"], task_name=e.get("taskName"),
            )
            for e in sorted(record.exceptions, key=lambda e: e["timestamp"], reverse=True)
        ]
        shown = entries[:maxExceptions]
        root = shown[0] if shown else None
        return JobExceptionsInfoWithHistory(
            root_exception=root.stacktrace if root else None, timestamp=root.timestamp if root else None,
            truncated=len(entries) > len(shown), exception_history=JobExceptionHistory(entries=shown, truncated=len(entries) > len(shown)),
        )

    @app.get("/jobs/{jid}/metrics", summary="Job metrics", response_model=list[Metric], response_model_exclude_none=True)
    def get_job_metrics(jid: str, get: Optional[str] = None) -> list[Metric]:
        record = job(jid)
        values: dict[str, Any] = {**manager.metrics(record.jid), **manager.user_metrics(record.jid)}
        if not get:
            return [Metric(id=name) for name in [*JOB_METRICS, *sorted(k for k in values if k not in JOB_METRICS)]]
        return [Metric(id=name, value=str(values[name])) for name in get.split(",") if values.get(name) is not None]

    @app.get("/kindling/jobs/{jid}/timeline", summary="Per-batch points of each query, for the dashboard's plots")
    def get_timeline(jid: str) -> dict[str, Any]:
        record = job(jid)
        queries = manager.status(record.jid).get("queries") or {}
        return {
            "jid": record.jid,
            "queries": {uid: {"name": q.get("name", uid), "points": q.get("points") or []} for uid, q in queries.items()},
        }

    @app.post("/kindling/jobs/{jid}/reconciliation", status_code=202,
              summary="Reconcile a SQL job: its output against a batch run of its script over its checkpoint's input")
    def post_reconciliation(jid: str) -> dict[str, Any]:
        return manager.reconcile(job(jid).jid)

    @app.get("/kindling/jobs/{jid}/reconciliation", summary="The job's last reconciliation: its state and report")
    def get_reconciliation(jid: str) -> dict[str, Any]:
        return manager.reconciliation(job(jid).jid)

    @app.get("/kindling/jobs/{jid}/sink-contents", summary="What the job's sinks hold now (an index's documents), for charts")
    def get_sink_contents(jid: str, limit: int = Query(100, ge=1, le=10_000)) -> dict[str, Any]:
        return manager.sink_contents(job(jid).jid, limit)

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


