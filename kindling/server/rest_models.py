"""The job manager's responses in Flink's REST wire format (``rest_v1_dispatcher.yml``, Flink 2.x).

One pydantic model per Flink response body, named as Flink names it, with Flink's JSON field
names as aliases. Flink's clients deserialize these strictly (the ``flink`` CLI fails on a
missing task state count or a ``null`` list), so each model carries every field Flink's Java
class requires, with Flink's types and enum values. kindling-only additions are listed apart
(``Kindling*`` models or ``extra`` fields) and never replace a Flink field.
"""

from __future__ import annotations

import hashlib
from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field

# Flink's enums, as the spec lists them.
JOB_STATUSES = ("INITIALIZING", "CREATED", "RUNNING", "FAILING", "FAILED", "CANCELLING", "CANCELED", "FINISHED", "RESTARTING", "SUSPENDED",
                "RECONCILING")
EXECUTION_STATES = ("CREATED", "SCHEDULED", "DEPLOYING", "RUNNING", "FINISHED", "CANCELING", "CANCELED", "FAILED", "RECONCILING", "INITIALIZING")
APPLICATION_STATES = ("CREATED", "RUNNING", "FAILING", "FAILED", "CANCELING", "CANCELED", "FINISHED")

JobStatus = Literal["INITIALIZING", "CREATED", "RUNNING", "FAILING", "FAILED", "CANCELLING", "CANCELED", "FINISHED", "RESTARTING", "SUSPENDED",
                    "RECONCILING"]
ExecutionState = Literal["CREATED", "SCHEDULED", "DEPLOYING", "RUNNING", "FINISHED", "CANCELING", "CANCELED", "FAILED", "RECONCILING", "INITIALIZING"]

# A job's state as its vertices show it (Flink's ExecutionState of the tasks of a job in that state).
VERTEX_STATE: dict[str, str] = {
    "INITIALIZING": "INITIALIZING", "CREATED": "CREATED", "RUNNING": "RUNNING", "FAILING": "FAILED", "FAILED": "FAILED",
    "CANCELLING": "CANCELING", "CANCELED": "CANCELED", "FINISHED": "FINISHED", "RESTARTING": "DEPLOYING",
    "SUSPENDED": "CANCELED", "RECONCILING": "RECONCILING",
}
# A job's state as its application shows it (Flink 2.x application mode: one application per submitted program).
APPLICATION_STATE: dict[str, str] = {
    "INITIALIZING": "CREATED", "CREATED": "CREATED", "RUNNING": "RUNNING", "FAILING": "FAILING", "FAILED": "FAILED",
    "CANCELLING": "CANCELING", "CANCELED": "CANCELED", "FINISHED": "FINISHED", "RESTARTING": "RUNNING",
    "SUSPENDED": "CANCELED", "RECONCILING": "RUNNING",
}


def flink_id(*parts: str) -> str:
    """A stable 32-hex-digit id (Flink's JobVertexID / ApplicationID format) for kindling objects."""
    return hashlib.md5("/".join(parts).encode()).hexdigest()


class FlinkModel(BaseModel):
    """A response body: fields by Flink's JSON names, Python names accepted on construction."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)


def task_counts(state: Optional[str] = None, count: int = 0, lowercase: bool = False) -> dict[str, int]:
    """Counts by every ExecutionState (Flink requires them all), ``count`` of them in ``state``."""
    counts = {s.lower() if lowercase else s: 0 for s in EXECUTION_STATES}
    if state is not None:
        counts[state.lower() if lowercase else state] += count
    return counts


# --- cluster ---------------------------------------------------------------------------------------
class Features(FlinkModel):
    web_submit: bool = Field(alias="web-submit")
    web_cancel: bool = Field(alias="web-cancel")
    web_rescale: bool = Field(alias="web-rescale")
    web_history: bool = Field(alias="web-history")


class DashboardConfiguration(FlinkModel):
    refresh_interval: int = Field(alias="refresh-interval")
    timezone_name: str = Field(alias="timezone-name")
    timezone_offset: int = Field(alias="timezone-offset")
    flink_version: str = Field(alias="flink-version")
    flink_revision: str = Field(alias="flink-revision")
    features: Features


class ClusterOverviewWithVersion(FlinkModel):
    taskmanagers: int
    taskmanagers_blocked: int = Field(0, alias="taskmanagers-blocked")
    slots_total: int = Field(alias="slots-total")
    slots_available: int = Field(alias="slots-available")
    slots_free_and_blocked: int = Field(0, alias="slots-free-and-blocked")
    jobs_running: int = Field(alias="jobs-running")
    jobs_finished: int = Field(alias="jobs-finished")
    jobs_cancelled: int = Field(alias="jobs-cancelled")
    jobs_failed: int = Field(alias="jobs-failed")
    flink_version: str = Field(alias="flink-version")
    flink_commit: str = Field(alias="flink-commit")


class ConfigurationInfoEntry(FlinkModel):
    key: str
    value: str


class JVMInfo(FlinkModel):
    version: str
    arch: str
    options: list[str]


class EnvironmentInfo(FlinkModel):
    jvm: JVMInfo
    classpath: list[str]


# --- jobs ------------------------------------------------------------------------------------------
class JobIdWithStatus(FlinkModel):
    id: str
    status: JobStatus


class JobIdsWithStatusOverview(FlinkModel):
    jobs: list[JobIdWithStatus]


class JobDetails(FlinkModel):
    """One entry of ``/jobs/overview``; ``tasks`` holds ``total`` and every ExecutionState in lower case."""

    jid: str
    name: str
    job_type: Literal["STREAMING", "BATCH"] = Field("STREAMING", alias="jobType")
    start_time: int = Field(alias="start-time")
    end_time: int = Field(alias="end-time")
    duration: int
    state: JobStatus
    last_modification: int = Field(alias="last-modification")
    tasks: dict[str, int]
    pending_operators: int = Field(0, alias="pending-operators")


class MultipleJobsDetails(FlinkModel):
    jobs: list[JobDetails]


class IOMetricsInfo(FlinkModel):
    read_bytes: int = Field(0, alias="read-bytes")
    read_bytes_complete: bool = Field(True, alias="read-bytes-complete")
    write_bytes: int = Field(0, alias="write-bytes")
    write_bytes_complete: bool = Field(True, alias="write-bytes-complete")
    read_records: int = Field(0, alias="read-records")
    read_records_complete: bool = Field(True, alias="read-records-complete")
    write_records: int = Field(0, alias="write-records")
    write_records_complete: bool = Field(True, alias="write-records-complete")
    accumulated_backpressured_time: int = Field(0, alias="accumulated-backpressured-time")
    accumulated_idle_time: int = Field(0, alias="accumulated-idle-time")
    accumulated_busy_time: float = Field(0.0, alias="accumulated-busy-time")


class JobVertexDetailsInfo(FlinkModel):
    """A vertex of ``/jobs/<id>``: a source, an operator or a sink of one of the job's Spark queries."""

    id: str
    slot_sharing_group_id: str = Field(alias="slotSharingGroupId")
    name: str
    max_parallelism: int = Field(alias="maxParallelism")
    parallelism: int
    status: ExecutionState
    start_time: int = Field(alias="start-time")
    end_time: int = Field(alias="end-time")
    duration: int
    tasks: dict[str, int]
    metrics: IOMetricsInfo
    # kindling: the vertex's kind, its query and Spark's per-vertex figures behind Flink's metrics.
    kind: Literal["source", "operator", "sink"]
    query: str
    kindling_metrics: dict[str, Optional[float]] = Field(default_factory=dict, alias="kindling-metrics")


class PlanNodeInput(FlinkModel):
    num: int
    id: str
    ship_strategy: str
    exchange: str


class PlanNode(FlinkModel):
    id: str
    parallelism: int
    operator: str
    operator_strategy: str
    description: str
    inputs: list[PlanNodeInput] = Field(default_factory=list)
    optimizer_properties: dict[str, Any] = Field(default_factory=dict)


class JobPlan(FlinkModel):
    jid: str
    name: str
    type: Literal["STREAMING", "BATCH"]
    nodes: list[PlanNode]


class JobDetailsInfo(FlinkModel):
    jid: str
    name: str
    is_stoppable: bool = Field(alias="isStoppable")
    state: JobStatus
    job_type: Literal["STREAMING", "BATCH"] = Field("STREAMING", alias="job-type")
    start_time: int = Field(alias="start-time")
    end_time: int = Field(alias="end-time")
    duration: int
    max_parallelism: int = Field(alias="maxParallelism")
    now: int
    timestamps: dict[str, int]
    vertices: list[JobVertexDetailsInfo]
    status_counts: dict[str, int] = Field(alias="status-counts")
    plan: JobPlan
    pending_operators: int = Field(0, alias="pending-operators")
    application_id: str = Field(alias="application-id")
    # kindling: the submitted program and its savepoints.
    program: dict[str, Any]
    savepoint_path: Optional[str] = Field(None, alias="savepointPath")
    last_savepoint: Optional[str] = Field(None, alias="lastSavepoint")
    checkpoint_dir: str = Field(alias="checkpointDir")


# --- asynchronous operations (savepoints, stop, disposal) -----------------------------------------
class TriggerResponse(FlinkModel):
    request_id: str = Field(alias="request-id")


class QueueStatus(FlinkModel):
    id: Literal["IN_PROGRESS", "COMPLETED"]


class SerializedThrowable(FlinkModel):
    class_name: str = Field(alias="class")
    stack_trace: str = Field(alias="stack-trace")
    serialized_throwable: str = Field(alias="serialized-throwable")


class SavepointInfo(FlinkModel):
    """A completed savepoint: its ``location``, or the ``failure-cause``; Flink omits the absent one."""

    model_config = ConfigDict(populate_by_name=True, serialize_by_alias=True)
    location: Optional[str] = None
    failure_cause: Optional[SerializedThrowable] = Field(None, alias="failure-cause")


class AsynchronousOperationResult(FlinkModel):
    status: QueueStatus
    operation: Optional[SavepointInfo] = None


# --- checkpoints ----------------------------------------------------------------------------------
class StatsSummaryDto(FlinkModel):
    min: int
    max: int
    avg: int
    p50: float
    p90: float
    p95: float
    p99: float
    p999: float


class CheckpointStatisticsSummary(FlinkModel):
    checkpointed_size: StatsSummaryDto
    state_size: StatsSummaryDto
    end_to_end_duration: StatsSummaryDto
    alignment_buffered: StatsSummaryDto
    processed_data: StatsSummaryDto
    persisted_data: StatsSummaryDto


class CompletedCheckpointStatistics(FlinkModel):
    class_name: Literal["completed"] = Field("completed", alias="className")
    id: int
    status: Literal["IN_PROGRESS", "COMPLETED", "FAILED"] = "COMPLETED"
    is_savepoint: bool
    savepoint_format: Optional[Literal["CANONICAL", "NATIVE"]] = Field(None, alias="savepointFormat")
    trigger_timestamp: int
    latest_ack_timestamp: int
    checkpointed_size: int
    state_size: int
    end_to_end_duration: int
    alignment_buffered: int = 0
    processed_data: int
    persisted_data: int = 0
    num_subtasks: int
    num_acknowledged_subtasks: int
    checkpoint_type: Literal["CHECKPOINT", "UNALIGNED_CHECKPOINT", "SAVEPOINT", "SYNC_SAVEPOINT", "FULL_CHECKPOINT"]
    tasks: dict[str, Any] = Field(default_factory=dict)
    external_path: Optional[str] = None
    discarded: bool = False
    # kindling: the query (sink) whose micro-batch this checkpoint is.
    operator: Optional[str] = None


class RestoredCheckpointStatistics(FlinkModel):
    id: int
    restore_timestamp: int
    is_savepoint: bool
    external_path: Optional[str] = None


class LatestCheckpoints(FlinkModel):
    completed: Optional[CompletedCheckpointStatistics] = None
    savepoint: Optional[CompletedCheckpointStatistics] = None
    failed: Optional[dict[str, Any]] = None
    restored: Optional[RestoredCheckpointStatistics] = None


class CheckpointCounts(FlinkModel):
    restored: int
    total: int
    in_progress: int
    completed: int
    failed: int


class CheckpointingStatistics(FlinkModel):
    counts: CheckpointCounts
    summary: CheckpointStatisticsSummary
    latest: LatestCheckpoints
    history: list[CompletedCheckpointStatistics]


class ExternalizedCheckpointInfo(FlinkModel):
    enabled: bool
    delete_on_cancellation: bool


class CheckpointConfigInfo(FlinkModel):
    mode: Literal["exactly_once", "at_least_once"]
    interval: int
    timeout: int
    min_pause: int
    max_concurrent: int
    externalization: ExternalizedCheckpointInfo
    state_backend: str
    checkpoint_storage: str
    unaligned_checkpoints: bool
    tolerable_failed_checkpoints: int
    aligned_checkpoint_timeout: int
    checkpoints_after_tasks_finish: bool
    state_changelog_enabled: bool
    changelog_periodic_materialization_interval: int
    changelog_storage: str


# --- exceptions -------------------------------------------------------------------------------------
class RootExceptionInfo(FlinkModel):
    exception_name: str = Field(alias="exceptionName")
    stacktrace: str
    timestamp: int
    task_name: Optional[str] = Field(None, alias="taskName")
    endpoint: Optional[str] = None
    task_manager_id: Optional[str] = Field(None, alias="taskManagerId")
    failure_labels: dict[str, str] = Field(default_factory=dict, alias="failureLabels")
    concurrent_exceptions: list[dict[str, Any]] = Field(default_factory=list, alias="concurrentExceptions")
    # kindling: the message without a stack trace.
    message: str


class JobExceptionHistory(FlinkModel):
    entries: list[RootExceptionInfo]
    truncated: bool


class JobExceptionsInfoWithHistory(FlinkModel):
    root_exception: Optional[str] = Field(None, alias="root-exception")
    timestamp: Optional[int] = None
    all_exceptions: list[dict[str, Any]] = Field(default_factory=list, alias="all-exceptions")
    truncated: bool
    exception_history: JobExceptionHistory = Field(alias="exceptionHistory")


# --- metrics ----------------------------------------------------------------------------------------
class Metric(FlinkModel):
    id: str
    value: Optional[str] = None


class AggregatedMetric(FlinkModel):
    id: str
    min: Optional[float] = None
    max: Optional[float] = None
    avg: Optional[float] = None
    sum: Optional[float] = None
    skew: Optional[float] = None


# --- task managers ----------------------------------------------------------------------------------
class ResourceProfileInfo(FlinkModel):
    cpu_cores: float = Field(alias="cpuCores")
    task_heap_memory: int = Field(0, alias="taskHeapMemory")
    task_off_heap_memory: int = Field(0, alias="taskOffHeapMemory")
    managed_memory: int = Field(0, alias="managedMemory")
    network_memory: int = Field(0, alias="networkMemory")
    extended_resources: dict[str, float] = Field(default_factory=dict, alias="extendedResources")


class HardwareDescription(FlinkModel):
    cpu_cores: int = Field(alias="cpuCores")
    physical_memory: int = Field(alias="physicalMemory")
    free_memory: int = Field(alias="freeMemory")
    managed_memory: int = Field(0, alias="managedMemory")


class TaskManagerInfo(FlinkModel):
    id: str
    path: str
    data_port: int = Field(alias="dataPort")
    jmx_port: int = Field(alias="jmxPort")
    time_since_last_heartbeat: int = Field(alias="timeSinceLastHeartbeat")
    slots_number: int = Field(alias="slotsNumber")
    free_slots: int = Field(alias="freeSlots")
    total_resource: ResourceProfileInfo = Field(alias="totalResource")
    free_resource: ResourceProfileInfo = Field(alias="freeResource")
    hardware: HardwareDescription
    memory_configuration: dict[str, Any] = Field(default_factory=dict, alias="memoryConfiguration")
    blocked: bool = False
    # kindling: the job this process serves; a driver's pid; whether it is a Spark driver or executor, and its host.
    job_id: Optional[str] = Field(None, alias="jobId")
    pid: Optional[int] = None
    kind: Optional[str] = None
    host: Optional[str] = None


class TaskManagersInfo(FlinkModel):
    taskmanagers: list[TaskManagerInfo]


# --- applications (Flink 2.x) -----------------------------------------------------------------------
class ApplicationDetails(FlinkModel):
    """One application: kindling submits one job per program, so one job per application."""

    id: str
    name: str
    start_time: int = Field(alias="start-time")
    end_time: int = Field(alias="end-time")
    duration: int
    status: Literal["CREATED", "RUNNING", "FAILING", "FAILED", "CANCELING", "CANCELED", "FINISHED"]
    jobs: dict[str, int]


class MultipleApplicationsDetails(FlinkModel):
    applications: list[ApplicationDetails]


