"""The driver side of the sink's two-phase commit: a commit log beside the data, fenced by batch id.

Layout under the table path (readers skip names that start with ``.``)::

    .kindling/staging/<writer>/<batch id>/...      in-progress files staged by executors (phase one)
    .kindling/commits/<writer>/<batch>-<seq>.commit  the commit log: one JSON entry per committed micro-batch

``<writer>`` names the writing query's checkpoint: each job appending to a table fences its own batch ids,
so a second job (a batch INSERT run again, another streaming job) appends instead of being taken for a
replay. Tables written before writers had names keep their one log in ``.kindling/commits/``.

``commit(messages, batch_id)`` runs in Spark's driver-side Python worker:

1. the latest entry is read; if it is for ``batch_id`` the batch was committed before the driver
   crashed: it is *rolled forward* (see 3) and nothing else happens -- a replayed batch is skipped.
   An older batch id means the table belongs to another checkpoint: the commit fails, naming it.
2. the new entry is planned: the staged files of this batch join the pending files of their
   bucket; the rolling policy / compaction decide which groups become visible now; partitions
   whose commit trigger fired are flushed and get ``_SUCCESS``. The entry (every final name,
   every staged source, what stays pending) is written atomically -- that write *is* the commit:
   the batch id and the publication are decided together.
3. roll forward: every publication of the entry is carried out idempotently -- a final file that
   exists is done (its sources are deleted); otherwise its one staged file is renamed (local) or
   copied server-side (S3), or its staged files are merged into a file that appears whole. Then
   ``_SUCCESS`` files, then staged files that no entry refers to (aborted or failed attempts of
   this or earlier batches) are deleted.

A crash anywhere leaves either no entry (the batch is replayed with fresh staged files, the old
ones are orphans deleted by the next commit) or an entry that the next commit rolls forward.
Publishing never lists: every name is in the entry. The end of a bounded input writes one more
entry for the same batch id (``seq`` + 1) that publishes everything still pending and commits
every partition (Flink's final checkpoint with the +infinity watermark).
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import threading
import time
import uuid
from typing import Any, Optional, Sequence

from kindling.connectors.filesystem import compaction, partition_commit
from kindling.connectors.filesystem.formats import merge_files
from kindling.connectors.filesystem.options import FileSystemConfig
from kindling.connectors.filesystem.storage import Storage

KEEP_ENTRIES = 20
# Not ".json": a reader globbing "**/*.json" over a JSON table must not pick the log up.
ENTRY_SUFFIX = ".commit"
END_OF_TIME_MS = 253370764800000  # 9999-01-01: at or beyond it the watermark means end of input

# Entries already rolled forward by this Python worker (driver workers are reused across batches).
_rolled: set[tuple[str, int, int]] = set()
_lock = threading.Lock()


class CommitFenceError(RuntimeError):
    """The commit log is ahead of this batch: the table was written by another checkpoint."""


def _entry_name(batch: int, seq: int) -> str:
    return f"{batch:020d}-{seq:04d}{ENTRY_SUFFIX}"


def writer_name(checkpoint: Optional[str]) -> str:
    """The name of the writer whose checkpoint is ``checkpoint`` ('' when unknown): its log's and staging's directory."""
    if not checkpoint:
        return ""
    path = checkpoint
    if path.startswith("file:"):
        path = "/" + path[len("file:"):].lstrip("/")
    return "w-" + hashlib.sha1(path.rstrip("/").encode()).hexdigest()[:16]


def staging_directory(storage: Storage, checkpoint: Optional[str]) -> str:
    """Where the writer with this checkpoint stages its files."""
    writer = writer_name(checkpoint)
    return posixpath.join(storage.control, "staging", writer) if writer else posixpath.join(storage.control, "staging")


class CommitLog:
    """The commit log of one writer of a table: read, plan, write and roll forward entries."""

    def __init__(self, storage: Storage, config: FileSystemConfig, checkpoint: Optional[str] = None) -> None:
        self.storage = storage
        self.config = config
        self.directory = posixpath.join(storage.control, "commits")
        self.staging = staging_directory(storage, checkpoint)
        writer = writer_name(checkpoint)
        if writer and not self.entries():  # no log of the layout before writers had names
            self.directory = posixpath.join(self.directory, writer)

    # --- reading -------------------------------------------------------------------------------
    def entries(self) -> list[tuple[int, int]]:
        found = []
        for info in self.storage.list(self.directory, recursive=False):
            name = posixpath.basename(info.path)
            if name.endswith(ENTRY_SUFFIX) and "-" in name and not name.startswith("."):
                batch, seq = name[: -len(ENTRY_SUFFIX)].split("-", 1)
                if batch.isdigit() and seq.isdigit():
                    found.append((int(batch), int(seq)))
        return sorted(found)

    def read(self, batch: int, seq: int) -> Optional[dict[str, Any]]:
        """The entry of ``batch`` and ``seq`` (None if the log no longer holds it)."""
        data = self.storage.read_bytes(posixpath.join(self.directory, _entry_name(batch, seq)))
        return None if data is None else json.loads(data)

    def latest(self) -> Optional[dict[str, Any]]:
        """The newest entry (listed every time: the end-of-input step may add one from another process)."""
        entries = self.entries()
        return self.read(*entries[-1]) if entries else None

    # --- the commit ----------------------------------------------------------------------------
    def commit(self, staged: Sequence[dict[str, Any]], batch_id: int, now_ms: int, watermark_ms: Optional[int], checkpoint: str = "") -> bool:
        """Commit one micro-batch's staged files; False if it was committed before (a replay)."""
        last = self.latest()
        if last is not None:
            if batch_id < last["batch"]:
                raise CommitFenceError(
                    f"filesystem sink: micro-batch {batch_id} is older than batch {last['batch']} already committed "
                    f"to {self.storage.uri(self.storage.root)}: the table's commit log belongs to another checkpoint "
                    f"(this one: {checkpoint or 'unknown'}). Write to a fresh 'path', or resume from that checkpoint."
                )
            self.roll_forward(last)
            if batch_id == last["batch"]:
                return False
        entry = self.plan(last, staged, batch_id, 0, now_ms, watermark_ms, flush_all=False)
        self.write(entry)
        self.roll_forward(entry)
        self.clean(entry)
        return True

    def finish(self, now_ms: Optional[int] = None) -> Optional[dict[str, Any]]:
        """End of input: publish every pending file and commit every partition (same batch id, next seq)."""
        last = self.latest()
        if last is None:
            return None
        self.roll_forward(last)
        if last.get("final"):
            return last
        now = now_ms if now_ms is not None else int(time.time() * 1000)
        entry = self.plan(last, [], last["batch"], last["seq"] + 1, now, END_OF_TIME_MS, flush_all=True)
        entry["final"] = True
        self.write(entry)
        self.roll_forward(entry)
        self.clean(entry)
        return entry

    def plan(self, last: Optional[dict[str, Any]], staged: Sequence[dict[str, Any]], batch_id: int, seq: int,
             now_ms: int, watermark_ms: Optional[int], flush_all: bool) -> dict[str, Any]:
        config = self.config
        pending: dict[str, dict[str, Any]] = {b: {"files": list(p["files"])} for b, p in (last or {}).get("pending", {}).items()}
        partitions: dict[str, dict[str, int]] = dict((last or {}).get("partitions", {}))
        for f in staged:
            f = dict(f, added=now_ms)
            pending.setdefault(f["bucket"], {"files": []})["files"].append(f)
            if config.commit_policies and f["bucket"] and f["bucket"] not in partitions:
                partitions[f["bucket"]] = {"created": now_ms}
        watermark = watermark_ms if watermark_ms and watermark_ms > 0 else None
        to_commit = sorted(
            b for b, p in partitions.items()
            if flush_all or partition_commit.committable(config, b, p["created"], now_ms, watermark)
        )
        publish: list[dict[str, Any]] = []
        kept: dict[str, dict[str, Any]] = {}
        for bucket in sorted(pending):
            groups, rest = compaction.plan_bucket(config, pending[bucket], now_ms, flush_all or bucket in to_commit)
            for group in groups:
                publish.append(self._publication(bucket, group))
            if rest["files"]:
                kept[bucket] = rest
        for bucket in to_commit:
            partitions.pop(bucket, None)
        return {
            "version": 1,
            "batch": batch_id,
            "seq": seq,
            "time": now_ms,
            "watermark": watermark,
            "publish": publish,
            "pending": kept,
            "partitions": partitions,
            "commit_partitions": to_commit if config.commit_policies else [],
        }

    def _publication(self, bucket: str, group: compaction.PublishGroup) -> dict[str, Any]:
        first = group.files[0]
        name = first["name"]
        if group.merge:
            name = ("compacted-" if self.config.auto_compaction else "") + name
        final = "/".join(p for p in (self.storage.data_root(), bucket, name) if p)
        return {
            "final": final,
            "sources": [f["path"] for f in group.files],
            "merge": group.merge,
            "rows": sum(f.get("rows", 0) for f in group.files),
            "bucket": bucket,
        }

    def write(self, entry: dict[str, Any]) -> None:
        path = posixpath.join(self.directory, _entry_name(entry["batch"], entry["seq"]))
        self.storage.write_atomic(path, json.dumps(entry, separators=(",", ":")).encode())

    # --- roll forward and clean up -------------------------------------------------------------
    def roll_forward(self, entry: dict[str, Any]) -> None:
        """Carry out an entry's publications and partition commits; safe to repeat."""
        key = (self.directory, entry["batch"], entry["seq"])
        with _lock:
            if key in _rolled:
                return
        storage = self.storage
        for item in entry["publish"]:
            final, sources = item["final"], item["sources"]
            if storage.exists(final):
                for source in sources:
                    storage.delete(source)
                continue
            missing = [s for s in sources if not storage.exists(s)]
            if missing:
                raise RuntimeError(
                    f"filesystem sink: cannot publish {storage.uri(final)} for batch {entry['batch']}: staged file "
                    f"{storage.uri(missing[0])} is gone (was the staging directory {storage.uri(self.staging)} deleted?)"
                )
            if not item["merge"]:
                storage.publish(sources[0], final)
                continue
            if storage.s3:
                merge_files(storage, sources, storage.open_output(final), self.config)  # appears whole on close
            else:
                temporary = posixpath.join(self.staging, f"merge-{uuid.uuid4().hex}.inprogress")
                merge_files(storage, sources, storage.open_output(temporary), self.config)
                storage.publish(temporary, final)
            for source in sources:
                storage.delete(source)
        for bucket in entry.get("commit_partitions", []):
            storage.touch(partition_commit.success_file(storage.root, bucket, self.config))
        with _lock:
            _rolled.add(key)

    def clean(self, entry: dict[str, Any]) -> None:
        """Delete staged files no entry needs (aborted or failed attempts) and old log entries."""
        keep = {f["path"] for p in entry["pending"].values() for f in p["files"]}
        batch = entry["batch"]
        for info in self.storage.list(self.staging, recursive=True):
            if info.type.name != "File" or info.path in keep:
                continue
            relative = posixpath.relpath(info.path, self.staging)
            head = relative.split("/", 1)[0]
            if (head.isdigit() and int(head) <= batch) or head.startswith("merge-"):
                self.storage.delete(info.path)
        if not self.storage.s3:
            for info in sorted(self.storage.list(self.staging, recursive=False), key=lambda i: i.path):
                head = posixpath.basename(info.path)
                if info.type.name == "Directory" and head.isdigit() and int(head) <= batch:
                    if not any(p.startswith(info.path + "/") for p in keep):
                        self.storage.delete_dir(info.path)
        entries = self.entries()
        for old in entries[:-KEEP_ENTRIES]:
            self.storage.delete(posixpath.join(self.directory, _entry_name(*old)))

