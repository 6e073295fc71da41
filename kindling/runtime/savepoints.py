"""Savepoints: a stopped job's checkpoints, taken between two micro-batches and copied with job metadata.

A savepoint directory holds one Spark checkpoint per sink uid (offsets, commits, state, sink
commit logs) and ``_metadata`` (JSON: job, pipeline fingerprint, stateful operators per sink uid,
configuration). Resuming copies it into a fresh checkpoint location; a pipeline whose state no
longer maps onto the savepoint is refused unless non-restored state is allowed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import shutil
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Optional

from pyspark.sql import DataFrame
from pyspark.sql.streaming import StreamingQuery

from kindling import config as cfg
from kindling.config import Configuration

if TYPE_CHECKING:
    from kindling.runtime.job import JobClient

log = logging.getLogger("kindling.savepoints")

METADATA_FILE = "_metadata"
RESTORE_MARKER = "_restored_from_savepoint.json"
FORMAT_VERSION = 1

# Plan nodes whose state lives in the checkpoint; a pipeline keeps its state only if these match.
_STATEFUL = re.compile(
    r"^[\s:+\-!~|]*(Aggregate|Deduplicate\w*|FlatMapGroupsWithState\w*|TransformWithState\w*|"
    r"FlatMapGroupsInPandasWithState\w*|Join|StreamingSymmetricHashJoin|Window|SessionWindow\w*|EventTimeWatermark)\b.*$"
)


class SavepointError(ValueError):
    """A savepoint cannot be taken, found, or restored; the message says which and why."""


def _plan_text(df: DataFrame) -> str:
    return str(df._jdf.queryExecution().analyzed().toString())  # type: ignore[attr-defined]


def stateful_operators(df: DataFrame) -> list[str]:
    """The stateful nodes of a sink's plan, with expression ids removed (they change every run)."""
    lines = []
    for line in _plan_text(df).splitlines():
        if _STATEFUL.match(line):
            text = re.sub(r"#\d+L?|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "", line).strip(" :+-!~|")
            lines.append(re.sub(r"\s+", " ", text))
    return lines


def fingerprint(df: DataFrame) -> dict[str, Any]:
    """What a sink's state depends on: its stateful operators and a hash of them."""
    operators = stateful_operators(df)
    digest = hashlib.sha256("\n".join(operators).encode()).hexdigest()[:16]
    return {"fingerprint": digest, "statefulOperators": operators}


def pipeline_fingerprint(operators: Mapping[str, Mapping[str, Any]]) -> str:
    text = json.dumps({uid: op["fingerprint"] for uid, op in sorted(operators.items())}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


# --- stopping between micro-batches ------------------------------------------------------------
def _between_batches(status: Mapping[str, Any]) -> bool:
    # Spark's status messages: a trigger first gets the sources' offsets (and logs them), then
    # runs the batch ("Processing new data"); only the latter writes to sinks and state.
    message = str(status.get("message") or "")
    return not status.get("isTriggerActive") or message.startswith(("Getting offsets", "Waiting"))


def stop_between_batches(query: StreamingQuery, timeout: float = 120.0) -> None:
    """Stop a query while it runs no micro-batch, so that no batch is left half written.

    A query that is behind schedule starts the next trigger right after a batch commits; it is
    stopped while it gathers that trigger's offsets. Offsets logged then are replayed on resume,
    with nothing of that batch written yet. A stop right after a batch that advanced the watermark
    needs no wait for Spark's follow-up no-data batch: every start from a checkpoint plans that batch
    (kindling.runtime.recovery), so a resumed savepoint fires what its watermark allows.
    """
    deadline = time.monotonic() + timeout
    while query.isActive and time.monotonic() < deadline:
        if _between_batches(query.status):
            query.stop()
            return
        time.sleep(0.005)  # polling the trigger state, not synchronising on time
    if query.isActive:
        log.warning("query %s stayed inside a micro-batch for %.0f s; stopping it anyway", query.name, timeout)
        query.stop()


def _last_batch(directory: Path) -> int:
    ids = [int(p.name) for p in directory.glob("[0-9]*") if p.name.isdigit()] if directory.is_dir() else []
    return max(ids, default=-1)


def checkpoint_position(checkpoint: Path) -> dict[str, int]:
    """The last batch whose offsets were logged and the last one committed in a Spark checkpoint."""
    return {"lastOffsetBatch": _last_batch(checkpoint / "offsets"), "lastCommittedBatch": _last_batch(checkpoint / "commits")}


# --- taking ------------------------------------------------------------------------------------
def resolve_target(conf: Configuration, target: Optional[str]) -> Path:
    directory = target or conf.get(cfg.SAVEPOINTS_DIR)
    if not directory:
        raise SavepointError("no savepoint directory: pass one or set 'state.savepoints.dir'")
    if str(directory).startswith("file://"):
        directory = str(directory)[len("file://"):]
    return Path(directory).expanduser().resolve()


def write_savepoint(
    target_directory: Path,
    job_id: str,
    job_name: str,
    checkpoint_root: Path,
    operators: Mapping[str, Mapping[str, Any]],
    conf: Configuration,
) -> Path:
    """Copy the (stopped) checkpoints of every sink into a new savepoint directory; return its path."""
    target_directory.mkdir(parents=True, exist_ok=True)
    path = target_directory / f"savepoint-{job_id[:6]}-{uuid.uuid4().hex[:12]}"
    staging = target_directory / f".{path.name}.inprogress"
    entries = {}
    for uid, operator in operators.items():
        checkpoint = checkpoint_root / uid
        if checkpoint.is_dir():
            shutil.copytree(checkpoint, staging / uid)
            position = checkpoint_position(checkpoint)
        else:
            position = {"lastOffsetBatch": -1, "lastCommittedBatch": -1}
        entries[uid] = {**operator, **position}
        if position["lastOffsetBatch"] != position["lastCommittedBatch"]:
            log.info("savepoint of %s: %s was stopped while planning batch %s; that batch runs on resume", job_name, uid, position["lastOffsetBatch"])
    metadata = {
        "version": FORMAT_VERSION,
        "jobId": job_id,
        "jobName": job_name,
        "timestamp": int(datetime.now(timezone.utc).timestamp() * 1000),
        "pipelineFingerprint": pipeline_fingerprint(operators),
        "operators": entries,
        "configuration": conf.to_dict(),
    }
    staging.mkdir(parents=True, exist_ok=True)
    (staging / METADATA_FILE).write_text(json.dumps(metadata, indent=2))
    staging.rename(path)  # a savepoint appears complete or not at all
    return path


def trigger_savepoint(
    client: "JobClient",
    checkpoint_root: Path,
    sinks: Mapping[str, DataFrame],
    target_directory: Optional[str] = None,
    stop: bool = False,
    job_id: Optional[str] = None,
) -> str:
    """Take a savepoint of a running job between two micro-batches; with ``stop`` the job then ends FINISHED."""
    directory = resolve_target(client.conf, target_directory)
    names = {plan.uid: plan.name for plan in client.plans}
    operators = {uid: {"name": names.get(uid, uid), **fingerprint(df)} for uid, df in sinks.items()}

    def copy() -> str:
        return str(write_savepoint(directory, job_id or client.job_id, client.job_name, checkpoint_root, operators, client.conf))

    return client.stop_at_batch_boundary(copy, finish=stop)


def read_metadata(path: str | Path) -> dict[str, Any]:
    """A savepoint's metadata; a clear error when ``path`` is not a savepoint."""
    directory = Path(str(path)[len("file://"):] if str(path).startswith("file://") else path).expanduser()
    metadata = directory / METADATA_FILE
    if not metadata.is_file():
        raise SavepointError(f"'{path}' is not a kindling savepoint (no {METADATA_FILE} file in it)")
    return json.loads(metadata.read_text())


def dispose(path: str | Path) -> None:
    """Delete a savepoint (Flink's savepoint disposal)."""
    read_metadata(path)
    shutil.rmtree(Path(str(path)[len("file://"):] if str(path).startswith("file://") else path).expanduser())


# --- restoring ---------------------------------------------------------------------------------
def restore(
    savepoint_path: str,
    checkpoint_root: Path,
    pipeline: Mapping[str, Mapping[str, Any]],
    allow_non_restored_state: bool,
) -> list[str]:
    """Copy a savepoint's checkpoints into ``checkpoint_root`` for the sinks of ``pipeline``; return the uids restored.

    ``pipeline`` maps each sink uid to its ``fingerprint``. Running again after a failure (the
    checkpoint root already came from this savepoint) resumes from the newer checkpoints instead.
    """
    metadata = read_metadata(savepoint_path)
    source = Path(str(savepoint_path)[len("file://"):] if str(savepoint_path).startswith("file://") else savepoint_path).expanduser().resolve()
    marker = checkpoint_root / RESTORE_MARKER
    if marker.is_file() and json.loads(marker.read_text()).get("savepoint") == str(source):
        return []
    unmapped = []
    for uid, operator in metadata["operators"].items():
        if uid not in pipeline:
            unmapped.append(f"'{uid}' (no sink with this uid in the new pipeline)")
        elif pipeline[uid]["fingerprint"] != operator["fingerprint"]:
            unmapped.append(
                f"'{uid}' (its stateful operators changed: savepoint has {operator['statefulOperators']}, "
                f"the pipeline has {pipeline[uid]['statefulOperators']})"
            )
    if unmapped and not allow_non_restored_state:
        raise SavepointError(
            f"cannot resume from savepoint {source}: the state of operator(s) {', '.join(unmapped)} does not map onto "
            "the new pipeline. Set 'execution.savepoint.ignore-unclaimed-state' = true (allowNonRestoredState, "
            "CLI 'run --allowNonRestoredState') to skip that state."
        )
    restored = []
    for uid in metadata["operators"]:
        if uid not in pipeline or pipeline[uid]["fingerprint"] != metadata["operators"][uid]["fingerprint"]:
            log.warning("savepoint %s: skipping the state of operator %s (allowNonRestoredState)", source, uid)
            continue
        target = checkpoint_root / uid
        if target.exists() and any(target.iterdir()):
            raise SavepointError(
                f"cannot resume from savepoint {source}: the checkpoint location {target} already holds a checkpoint. "
                "A savepoint is restored into a fresh location: change 'state.checkpoints.dir' or 'pipeline.name', or delete it."
            )
        if (source / uid).is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copytree(source / uid, target)
            restored.append(uid)
    checkpoint_root.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps({"savepoint": str(source), "restored": restored}))
    return restored


def restore_configured(conf: Configuration, checkpoint_root: Path, sinks: Mapping[str, DataFrame]) -> list[str]:
    """Restore ``execution.savepoint.path`` into the job's checkpoint root, if it is set."""
    path = conf.get(cfg.SAVEPOINT_PATH)
    if not path:
        return []
    pipeline = {uid: fingerprint(df) for uid, df in sinks.items()}
    restored = restore(path, checkpoint_root, pipeline, bool(conf.get(cfg.SAVEPOINT_IGNORE_UNCLAIMED)))
    if restored:
        log.warning("job resumes from savepoint %s (operators %s)", path, ", ".join(restored))
    return restored
