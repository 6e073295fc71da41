"""Savepoints: a stopped job's checkpoints, taken between two micro-batches and copied with job metadata.

A savepoint directory holds one Spark checkpoint per sink uid (offsets, commits, state, sink
commit logs) and ``_metadata`` (JSON: job, pipeline fingerprint, stateful operators per sink uid,
configuration with secrets hidden). Resuming copies it into a fresh checkpoint location; a pipeline
whose state no longer maps onto the savepoint is refused unless non-restored state is allowed.

A savepoint directory may be local or on S3 (``s3://bucket/prefix``, reached with the job's ``s3.*``
options, else the AWS default chain), while the job's checkpoints stay on a path the driver reads: Spark
writes checkpoints through Hadoop's filesystems, kindling copies savepoints through its own S3 client. A
savepoint is complete when its ``_metadata`` exists: locally the directory is renamed into place, on S3
``_metadata`` is the last object written.
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

import pyarrow.fs as pafs
from pyspark.sql import DataFrame
from pyspark.sql.streaming import StreamingQuery

from kindling import config as cfg
from kindling.config import Configuration
from kindling.object_store import S3_OPTIONS, S3Settings, bucket_path, explain, is_missing, is_s3, s3_filesystem
from kindling.row_layout import INTERNAL_PREFIX

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


# A keyed operator's function and the columns it is given: the state is keyed by its grouping columns (the slot and
# key group, kindling.datastream.operator), whatever else the input holds or how it travels (packed or not).
_KEYED_INPUT = re.compile(r"(transformWithStateUDF)\(([^()]*)\)")
_GROUPING = (INTERNAL_PREFIX + "bucket", INTERNAL_PREFIX + "slot")


def _normalized(line: str) -> str:
    """A stateful node's line as its state depends on it: expression ids removed (they change every run), and a keyed
    operator's input columns left out but for its grouping columns. Applied again to a normalised line, it is that
    line."""
    text = re.sub(r"#\d+L?|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "", line).strip(" :+-!~|")
    text = _KEYED_INPUT.sub(lambda m: f"{m.group(1)}({', '.join(a for a in m.group(2).split(', ') if a.startswith(_GROUPING))})",
                            text)
    return re.sub(r"\s+", " ", text)


def stateful_operators(df: DataFrame) -> list[str]:
    """The stateful nodes of a sink's plan, normalised (:func:`_normalized`)."""
    return [_normalized(line) for line in _plan_text(df).splitlines() if _STATEFUL.match(line)]


def _digest(operators: list[str]) -> str:
    return hashlib.sha256("\n".join(operators).encode()).hexdigest()[:16]


def fingerprint(df: DataFrame) -> dict[str, Any]:
    """What a sink's state depends on: its stateful operators and a hash of them."""
    operators = stateful_operators(df)
    return {"fingerprint": _digest(operators), "statefulOperators": operators}


def _same_state(saved: Mapping[str, Any], planned: Mapping[str, Any]) -> bool:
    """Whether a savepoint's operator (its metadata) maps onto a planned sink's fingerprint: the same fingerprint, or
    the same once the savepoint's operators are normalised as now (a savepoint of an earlier kindling, whose keyed
    operators' lines named every input column: `transformWithStateUDF(__kindling_bucket0, __kindling_packed)`)."""
    if saved["fingerprint"] == planned["fingerprint"]:
        return True
    lines = saved.get("statefulOperators")
    return bool(lines) and _digest([_normalized(line) for line in lines]) == planned["fingerprint"]


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
def resolve_target(conf: Configuration, target: Optional[str]) -> str:
    """The savepoint directory to write to: ``target``, else ``state.savepoints.dir``; local paths made absolute."""
    directory = target or conf.get(cfg.SAVEPOINTS_DIR)
    if not directory:
        raise SavepointError("no savepoint directory: pass one or set 'state.savepoints.dir'")
    return normalise(str(directory))


def normalise(path: str) -> str:
    """A savepoint location as kindling records it: ``s3://bucket/key`` or an absolute local path."""
    if is_s3(path):
        return "s3://" + bucket_path(path)
    if path.startswith("file://"):
        path = path[len("file://"):]
    return str(Path(path).expanduser().resolve())


def _s3_settings(conf: Optional[Configuration]) -> S3Settings:
    if conf is None:
        return S3Settings(None, None, None, False, None)
    return S3Settings.from_values({option.key: conf.get(option) for option in S3_OPTIONS})


class _Location:
    """A savepoint location on the filesystem that holds it: the local disk, or an S3 bucket."""

    def __init__(self, path: str, conf: Optional[Configuration], option: str) -> None:
        self.uri = normalise(str(path))
        self.option = option
        self.s3 = is_s3(self.uri)
        self.settings = _s3_settings(conf)
        self.fs: pafs.FileSystem = s3_filesystem(self.settings) if self.s3 else pafs.LocalFileSystem()
        self.root = bucket_path(self.uri) if self.s3 else self.uri

    def error(self, exc: OSError) -> SavepointError:
        if not self.s3:
            return SavepointError(f"savepoint {self.uri}: {exc}")
        return SavepointError(explain(exc, self.settings, self.uri, "configuration option", self.option))

    def read_text(self, name: str) -> Optional[str]:
        try:
            with self.fs.open_input_stream(f"{self.root}/{name}") as stream:
                return stream.read().decode()
        except OSError as exc:
            if is_missing(exc):
                return None
            raise self.error(exc) from None

    def is_dir(self, name: str) -> bool:
        try:
            return self.fs.get_file_info(f"{self.root}/{name}").type == pafs.FileType.Directory
        except OSError as exc:
            raise self.error(exc) from None


def write_savepoint(
    target_directory: str,
    job_id: str,
    job_name: str,
    checkpoint_root: Path,
    operators: Mapping[str, Mapping[str, Any]],
    conf: Configuration,
) -> str:
    """Copy the (stopped) checkpoints of every sink into a new savepoint directory; return its path."""
    name = f"savepoint-{job_id[:6]}-{uuid.uuid4().hex[:12]}"
    entries = {}
    for uid, operator in operators.items():
        checkpoint = checkpoint_root / uid
        position = checkpoint_position(checkpoint) if checkpoint.is_dir() else {"lastOffsetBatch": -1, "lastCommittedBatch": -1}
        entries[uid] = {**operator, **position}
        if position["lastOffsetBatch"] != position["lastCommittedBatch"]:
            log.info("savepoint of %s: %s was stopped while planning batch %s; that batch runs on resume", job_name, uid, position["lastOffsetBatch"])
    metadata = json.dumps({
        "version": FORMAT_VERSION,
        "jobId": job_id,
        "jobName": job_name,
        "timestamp": int(datetime.now(timezone.utc).timestamp() * 1000),
        "pipelineFingerprint": pipeline_fingerprint(operators),
        "operators": entries,
        "configuration": conf.to_display_dict(),
    }, indent=2)
    target = _Location(target_directory, conf, "state.savepoints.dir")
    if target.s3:
        return _upload(target, name, checkpoint_root, list(operators), metadata)
    directory = Path(target.root)
    directory.mkdir(parents=True, exist_ok=True)
    staging = directory / f".{name}.inprogress"
    for uid in operators:
        if (checkpoint_root / uid).is_dir():
            shutil.copytree(checkpoint_root / uid, staging / uid)
    staging.mkdir(parents=True, exist_ok=True)
    (staging / METADATA_FILE).write_text(metadata)
    staging.rename(directory / name)  # a savepoint appears complete or not at all
    return str(directory / name)


def _upload(target: _Location, name: str, checkpoint_root: Path, uids: list[str], metadata: str) -> str:
    """Copy the checkpoints to S3, ``_metadata`` last: until it is written, the prefix is no savepoint."""
    prefix = f"{target.root}/{name}"
    try:
        for uid in uids:
            if (checkpoint_root / uid).is_dir():
                pafs.copy_files(str(checkpoint_root / uid), f"{prefix}/{uid}", source_filesystem=pafs.LocalFileSystem(),
                                destination_filesystem=target.fs)
        with target.fs.open_output_stream(f"{prefix}/{METADATA_FILE}") as out:
            out.write(metadata.encode())
    except OSError as exc:
        try:
            target.fs.delete_dir(prefix)
        except OSError:
            log.warning("could not remove the incomplete savepoint s3://%s", prefix)
        raise target.error(exc) from None
    return f"s3://{prefix}"


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
        return write_savepoint(directory, job_id or client.job_id, client.job_name, checkpoint_root, operators, client.conf)

    return client.stop_at_batch_boundary(copy, finish=stop)


def read_metadata(path: str | Path, conf: Optional[Configuration] = None) -> dict[str, Any]:
    """A savepoint's metadata; a clear error when ``path`` is not a savepoint (``conf``: the ``s3.*`` options)."""
    text = _Location(str(path), conf, "execution.savepoint.path").read_text(METADATA_FILE)
    if text is None:
        raise SavepointError(f"'{path}' is not a kindling savepoint (no {METADATA_FILE} file in it)")
    return json.loads(text)


def dispose(path: str | Path, conf: Optional[Configuration] = None) -> None:
    """Delete a savepoint (Flink's savepoint disposal)."""
    read_metadata(path, conf)
    location = _Location(str(path), conf, "savepoint path")
    if not location.s3:
        shutil.rmtree(location.root)
        return
    try:
        location.fs.delete_dir(location.root)
    except OSError as exc:
        raise location.error(exc) from None


# --- restoring ---------------------------------------------------------------------------------
def restore(
    savepoint_path: str,
    checkpoint_root: Path,
    pipeline: Mapping[str, Mapping[str, Any]],
    allow_non_restored_state: bool,
    conf: Optional[Configuration] = None,
) -> list[str]:
    """Copy a savepoint's checkpoints into ``checkpoint_root`` for the sinks of ``pipeline``; return the uids restored.

    ``pipeline`` maps each sink uid to its ``fingerprint``. Running again after a failure (the
    checkpoint root already came from this savepoint) resumes from the newer checkpoints instead.
    ``conf`` gives the ``s3.*`` options for a savepoint on S3.
    """
    metadata = read_metadata(savepoint_path, conf)
    location = _Location(str(savepoint_path), conf, "execution.savepoint.path")
    source = location.uri
    marker = checkpoint_root / RESTORE_MARKER
    if marker.is_file() and json.loads(marker.read_text()).get("savepoint") == source:
        return []
    unmapped = []
    for uid, operator in metadata["operators"].items():
        if uid not in pipeline:
            unmapped.append(f"'{uid}' (no sink with this uid in the new pipeline)")
        elif not _same_state(operator, pipeline[uid]):
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
        if uid not in pipeline or not _same_state(metadata["operators"][uid], pipeline[uid]):
            log.warning("savepoint %s: skipping the state of operator %s (allowNonRestoredState)", source, uid)
            continue
        target = checkpoint_root / uid
        if target.exists() and any(target.iterdir()):
            raise SavepointError(
                f"cannot resume from savepoint {source}: the checkpoint location {target} already holds a checkpoint. "
                "A savepoint is restored into a fresh location: change 'state.checkpoints.dir' or 'pipeline.name', or delete it."
            )
        if location.is_dir(uid):
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                pafs.copy_files(f"{location.root}/{uid}", str(target), source_filesystem=location.fs,
                                destination_filesystem=pafs.LocalFileSystem())
            except OSError as exc:
                shutil.rmtree(target, ignore_errors=True)  # a partial copy would pass for a checkpoint
                raise location.error(exc) from None
            restored.append(uid)
    checkpoint_root.mkdir(parents=True, exist_ok=True)
    marker.write_text(json.dumps({"savepoint": source, "restored": restored}))
    return restored


def restore_configured(conf: Configuration, checkpoint_root: Path, sinks: Mapping[str, DataFrame]) -> list[str]:
    """Restore ``execution.savepoint.path`` into the job's checkpoint root, if it is set."""
    path = conf.get(cfg.SAVEPOINT_PATH)
    if not path:
        return []
    pipeline = {uid: fingerprint(df) for uid, df in sinks.items()}
    restored = restore(path, checkpoint_root, pipeline, bool(conf.get(cfg.SAVEPOINT_IGNORE_UNCLAIMED)), conf)
    if restored:
        log.warning("job resumes from savepoint %s (operators %s)", path, ", ".join(restored))
    return restored
