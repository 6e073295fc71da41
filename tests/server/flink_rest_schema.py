"""Flink's REST response schemas for the routes kindling serves, and a validator for them.

Encoded by hand from Flink's published OpenAPI spec (``docs/static/generated/rest_v1_dispatcher.yml``
in apache/flink, read for the field names, types and enums of each response body) and from the
Java classes the ``flink`` CLI of apache-flink 2.3 deserializes them with (read with ``javap``: the
``@JsonProperty`` names of each ``@JsonCreator``, the enums ``JobStatus``, ``ExecutionState`` and
``ApplicationState``). Flink's spec marks few properties required, yet its Java classes refuse a
body without them (``MultipleJobsDetails`` throws on a missing ``jobs``, ``JobDetails`` reads the
``total`` task count): ``required`` below lists what those constructors need. The spec itself is
not vendored. A small validator does the checking: the subset of JSON Schema used here (type,
properties, required, items, additionalProperties, enum, pattern, nullable, oneOf, maxProperties).
"""

from __future__ import annotations

import re
from typing import Any

JOB_STATUS = ["INITIALIZING", "CREATED", "RUNNING", "FAILING", "FAILED", "CANCELLING", "CANCELED", "FINISHED", "RESTARTING", "SUSPENDED",
              "RECONCILING"]
EXECUTION_STATE = ["CREATED", "SCHEDULED", "DEPLOYING", "RUNNING", "FINISHED", "CANCELING", "CANCELED", "FAILED", "RECONCILING", "INITIALIZING"]
HEX32 = "^[0-9a-f]{32}$"

INT = {"type": "integer"}
LONG = {"type": "integer"}
DOUBLE = {"type": "number"}
BOOL = {"type": "boolean"}
STRING = {"type": "string"}
ID = {"type": "string", "pattern": HEX32}


def obj(properties: dict[str, Any], required: Any = "all", **more: Any) -> dict[str, Any]:
    """An object schema; by default every listed property is required."""
    return {"type": "object", "properties": properties, "required": list(properties) if required == "all" else required, **more}


def counts(keys: list[str]) -> dict[str, Any]:
    """A map of counts that must hold every key in ``keys`` (Flink's task and vertex counts by state)."""
    return {"type": "object", "additionalProperties": INT, "required": keys}


STATS = obj({k: LONG for k in ("min", "max", "avg")} | {k: DOUBLE for k in ("p50", "p90", "p95", "p99", "p999")})
IO_METRICS = obj({
    "read-bytes": LONG, "read-bytes-complete": BOOL, "write-bytes": LONG, "write-bytes-complete": BOOL,
    "read-records": LONG, "read-records-complete": BOOL, "write-records": LONG, "write-records-complete": BOOL,
    "accumulated-backpressured-time": LONG, "accumulated-idle-time": LONG, "accumulated-busy-time": DOUBLE,
})
SERIALIZED_THROWABLE = obj({"class": STRING, "stack-trace": STRING, "serialized-throwable": STRING}, required=["serialized-throwable"])
CHECKPOINT_STATISTICS = obj({
    "className": {"type": "string", "enum": ["completed", "failed", "in_progress"]},
    "id": LONG, "status": {"type": "string", "enum": ["IN_PROGRESS", "COMPLETED", "FAILED"]}, "is_savepoint": BOOL,
    "savepointFormat": {"type": "string", "enum": ["CANONICAL", "NATIVE"], "nullable": True},
    "trigger_timestamp": LONG, "latest_ack_timestamp": LONG, "checkpointed_size": LONG, "state_size": LONG,
    "end_to_end_duration": LONG, "alignment_buffered": LONG, "processed_data": LONG, "persisted_data": LONG,
    "num_subtasks": INT, "num_acknowledged_subtasks": INT,
    "checkpoint_type": {"type": "string", "enum": ["CHECKPOINT", "UNALIGNED_CHECKPOINT", "SAVEPOINT", "SYNC_SAVEPOINT", "FULL_CHECKPOINT"]},
    "tasks": {"type": "object"}, "external_path": {"type": "string", "nullable": True}, "discarded": BOOL,
})
NULLABLE_CHECKPOINT = {**CHECKPOINT_STATISTICS, "nullable": True}
QUEUE_STATUS = obj({"id": {"type": "string", "enum": ["IN_PROGRESS", "COMPLETED"]}})
OPERATION_RESULT = obj(
    {"status": QUEUE_STATUS, "operation": {"oneOf": [
        obj({"location": STRING}),
        obj({"failure-cause": SERIALIZED_THROWABLE}),
        {"type": "object", "maxProperties": 0},
    ]}},
    required=["status"],
)
TRIGGER_RESPONSE = obj({"request-id": ID})

# Response body of each route kindling serves, by (method, route as FastAPI names it).
ROUTES: dict[tuple[str, str], dict[str, Any]] = {
    ("GET", "/config"): obj({
        "refresh-interval": LONG, "timezone-name": STRING, "timezone-offset": INT, "flink-version": STRING, "flink-revision": STRING,
        "features": obj({"web-submit": BOOL, "web-cancel": BOOL, "web-rescale": BOOL, "web-history": BOOL}),
    }),
    ("GET", "/overview"): obj({
        "taskmanagers": INT, "taskmanagers-blocked": INT, "slots-total": INT, "slots-available": INT, "slots-free-and-blocked": INT,
        "jobs-running": INT, "jobs-finished": INT, "jobs-cancelled": INT, "jobs-failed": INT, "flink-version": STRING, "flink-commit": STRING,
    }),
    ("GET", "/jobmanager/config"): {"type": "array", "items": obj({"key": STRING, "value": STRING})},
    ("GET", "/jobmanager/environment"): obj({
        "jvm": obj({"version": STRING, "arch": STRING, "options": {"type": "array", "items": STRING}}),
        "classpath": {"type": "array", "items": STRING},
    }),
    ("GET", "/taskmanagers"): obj({"taskmanagers": {"type": "array", "items": obj({
        "id": STRING, "path": STRING, "dataPort": INT, "jmxPort": INT, "timeSinceLastHeartbeat": LONG, "slotsNumber": INT,
        "freeSlots": INT, "totalResource": obj({"cpuCores": DOUBLE, "taskHeapMemory": INT, "taskOffHeapMemory": INT,
                                                  "managedMemory": INT, "networkMemory": INT, "extendedResources": {"type": "object"}}),
        "freeResource": {"type": "object", "required": ["cpuCores"]},
        "hardware": obj({"cpuCores": INT, "physicalMemory": LONG, "freeMemory": LONG, "managedMemory": LONG}),
        "memoryConfiguration": {"type": "object"}, "blocked": BOOL,
    })}}),
    ("GET", "/applications/overview"): obj({"applications": {"type": "array", "items": obj({
        "id": ID, "name": STRING, "start-time": LONG, "end-time": LONG, "duration": LONG,
        "status": {"type": "string", "enum": ["CREATED", "RUNNING", "FAILING", "FAILED", "CANCELING", "CANCELED", "FINISHED"]},
        "jobs": counts(JOB_STATUS),
    })}}),
    ("GET", "/jobs"): obj({"jobs": {"type": "array", "items": obj({"id": ID, "status": {"type": "string", "enum": JOB_STATUS}})}}),
    ("GET", "/jobs/overview"): obj({"jobs": {"type": "array", "items": obj({
        "jid": ID, "name": STRING, "start-time": LONG, "end-time": LONG, "duration": LONG,
        "state": {"type": "string", "enum": JOB_STATUS}, "last-modification": LONG,
        "tasks": counts(["total", *(s.lower() for s in EXECUTION_STATE)]),
    })}}),
    ("GET", "/jobs/metrics"): {
        "type": "array",
        "items": obj({"id": STRING, "min": DOUBLE, "max": DOUBLE, "avg": DOUBLE, "sum": DOUBLE, "skew": DOUBLE}, required=["id"]),
    },
    ("GET", "/jobs/{jid}"): obj({
        "jid": ID, "name": STRING, "isStoppable": BOOL, "state": {"type": "string", "enum": JOB_STATUS},
        "job-type": {"type": "string", "enum": ["STREAMING", "BATCH"]},
        "start-time": LONG, "end-time": LONG, "duration": LONG, "maxParallelism": LONG, "now": LONG,
        "timestamps": counts(JOB_STATUS),
        "vertices": {"type": "array", "items": obj({
            "id": ID, "name": STRING, "maxParallelism": INT, "parallelism": INT, "status": {"type": "string", "enum": EXECUTION_STATE},
            "start-time": LONG, "end-time": LONG, "duration": LONG, "tasks": counts(EXECUTION_STATE), "metrics": IO_METRICS,
        })},
        "status-counts": counts(EXECUTION_STATE),
        "plan": obj({"jid": ID, "name": STRING, "type": STRING, "nodes": {"type": "array", "items": obj(
            {"id": ID, "parallelism": INT, "operator": STRING, "description": STRING,
             "inputs": {"type": "array", "items": obj({"num": INT, "id": ID, "ship_strategy": STRING, "exchange": STRING})}},
        )}}),
    }),
    ("POST", "/jobs/{jid}/stop"): TRIGGER_RESPONSE,
    ("POST", "/jobs/{jid}/savepoints"): TRIGGER_RESPONSE,
    ("GET", "/jobs/{jid}/savepoints/{trigger_id}"): OPERATION_RESULT,
    ("POST", "/savepoint-disposal"): TRIGGER_RESPONSE,
    ("GET", "/savepoint-disposal/{trigger_id}"): OPERATION_RESULT,
    ("GET", "/jobs/{jid}/checkpoints"): obj({
        "counts": obj({"restored": LONG, "total": LONG, "in_progress": INT, "completed": LONG, "failed": LONG}),
        "summary": obj({k: STATS for k in ("checkpointed_size", "state_size", "end_to_end_duration", "alignment_buffered", "processed_data",
                                           "persisted_data")}),
        "latest": obj({"completed": NULLABLE_CHECKPOINT, "savepoint": NULLABLE_CHECKPOINT, "failed": {"type": "object", "nullable": True},
                       "restored": {**obj({"id": LONG, "restore_timestamp": LONG, "is_savepoint": BOOL, "external_path": STRING}),
                                    "nullable": True}}),
        "history": {"type": "array", "items": CHECKPOINT_STATISTICS},
    }),
    ("GET", "/jobs/{jid}/checkpoints/config"): obj({
        "mode": {"type": "string", "enum": ["exactly_once", "at_least_once"]}, "interval": LONG, "timeout": LONG, "min_pause": LONG,
        "max_concurrent": LONG, "externalization": obj({"enabled": BOOL, "delete_on_cancellation": BOOL}), "state_backend": STRING,
        "checkpoint_storage": STRING, "unaligned_checkpoints": BOOL, "tolerable_failed_checkpoints": INT, "aligned_checkpoint_timeout": LONG,
        "checkpoints_after_tasks_finish": BOOL, "state_changelog_enabled": BOOL, "changelog_periodic_materialization_interval": LONG,
        "changelog_storage": STRING,
    }),
    ("GET", "/jobs/{jid}/exceptions"): obj({
        "root-exception": {"type": "string", "nullable": True}, "timestamp": {"type": "integer", "nullable": True},
        "all-exceptions": {"type": "array"}, "truncated": BOOL,
        "exceptionHistory": obj({"entries": {"type": "array", "items": obj({
            "exceptionName": STRING, "stacktrace": STRING, "timestamp": LONG, "taskName": {"type": "string", "nullable": True},
            "taskManagerId": {"type": "string", "nullable": True}, "failureLabels": {"type": "object", "additionalProperties": STRING},
            "concurrentExceptions": {"type": "array"},
        })}, "truncated": BOOL}),
    }),
    ("GET", "/jobs/{jid}/metrics"): {"type": "array", "items": obj({"id": STRING, "value": STRING}, required=["id"])},
}

# Routes of kindling's own (no Flink counterpart): not checked against Flink's spec.
KINDLING_ROUTES = {("POST", "/kindling/run"), ("GET", "/kindling/jobs/{jid}/timeline"), ("GET", "/kindling/jobs/{jid}/reconciliation"),
                   ("POST", "/kindling/jobs/{jid}/reconciliation"), ("GET", "/kindling/jobs/{jid}/sink-contents"), ("GET", "/metrics"),
                   ("GET", "/"), ("PATCH", "/jobs/{jid}")}

_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "number": (int, float), "integer": int}


def errors(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """Every way ``value`` breaks ``schema``, each as '<json path>: <problem>'."""
    if value is None:
        return [] if schema.get("nullable") else [f"{path}: null where the schema has no null"]
    if "oneOf" in schema:
        matches = [s for s in schema["oneOf"] if not errors(value, s, path)]
        return [] if matches else [f"{path}: matches none of {len(schema['oneOf'])} alternatives: {value!r}"]
    kind = schema.get("type")
    if kind is not None:
        expected = _TYPES[kind]
        if not isinstance(value, expected) or (kind in ("integer", "number") and isinstance(value, bool)):
            return [f"{path}: {type(value).__name__} where the schema has {kind}"]
    found: list[str] = []
    if "enum" in schema and value not in schema["enum"]:
        found.append(f"{path}: {value!r} is not one of {schema['enum']}")
    if "pattern" in schema and not re.search(schema["pattern"], value):
        found.append(f"{path}: {value!r} does not match {schema['pattern']}")
    if isinstance(value, dict):
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            found.append(f"{path}: more than {schema['maxProperties']} fields")
        for key in schema.get("required", []):
            if key not in value:
                found.append(f"{path}: required field '{key}' is missing")
        properties = schema.get("properties", {})
        for key, item in value.items():
            if key in properties:
                found += errors(item, properties[key], f"{path}.{key}")
            elif "additionalProperties" in schema:
                found += errors(item, schema["additionalProperties"], f"{path}.{key}")
    if isinstance(value, list) and "items" in schema:
        for index, item in enumerate(value):
            found += errors(item, schema["items"], f"{path}[{index}]")
    return found
