"""Shared helpers for the filesystem connector tests: drive the writer as Spark would, and look at a table as a reader."""

from __future__ import annotations

import json
import posixpath
from pathlib import Path
from typing import Iterable

import pyarrow as pa
import pyarrow.fs as pafs
import pyarrow.json as pajson
import pyarrow.parquet as pq
from pyspark.sql.types import StructType

from kindling.connectors.filesystem import commit_log
from kindling.connectors.filesystem import sink as sink_module
from kindling.connectors.filesystem.sink import FileStreamWriter


def forget_driver_state() -> None:
    """What a restarted driver knows: nothing but the files."""
    commit_log._rolled.clear()


class Driver:
    """Runs micro-batches through a FileStreamWriter: write() per task (executors), commit() (driver).

    Batch times and watermarks come from a fake offset log in ``checkpoint``, as Spark writes it.
    """

    def __init__(self, options: dict, schema: StructType, checkpoint: Path, monkeypatch) -> None:
        self.options = dict(options, checkpointLocation=str(checkpoint))
        self.schema = schema
        self.checkpoint = checkpoint
        self.monkeypatch = monkeypatch
        self.writer = FileStreamWriter(self.options, schema)

    def stage(self, batch_id: int, tasks: Iterable[pa.Table], now_ms: int = 0, watermark_ms: int = 0) -> list:
        offsets = self.checkpoint / "offsets"
        offsets.mkdir(parents=True, exist_ok=True)
        (offsets / str(batch_id)).write_text("v1\n" + json.dumps({"batchWatermarkMs": watermark_ms, "batchTimestampMs": now_ms}) + "\n{}\n")
        messages = []
        for task, table in enumerate(tasks):
            self.monkeypatch.setattr(sink_module, "_task_identity", lambda task=task: (batch_id, task))
            messages.append(self.writer.write(iter(table.to_batches(max_chunksize=100))))
        return messages

    def run(self, batch_id: int, tasks: Iterable[pa.Table], now_ms: int = 0, watermark_ms: int = 0) -> list:
        messages = self.stage(batch_id, tasks, now_ms, watermark_ms)
        self.writer.commit(messages, batch_id)
        return messages


class Table:
    """A table directory as a reader sees it: every visible file (no '.'/'_' names), read whole."""

    def __init__(self, fs: pafs.FileSystem, root: str, fmt: str) -> None:
        self.fs, self.root, self.fmt = fs, root.rstrip("/"), fmt

    def files(self) -> list[str]:
        infos = self.fs.get_file_info(pafs.FileSelector(self.root, recursive=True, allow_not_found=True))
        out = []
        for info in infos:
            if info.type != pafs.FileType.File:
                continue
            relative = posixpath.relpath(info.path, self.root)
            if any(p.startswith((".", "_")) for p in relative.split("/")):
                continue
            out.append(relative)
        return sorted(out)

    def all_names(self) -> list[str]:
        infos = self.fs.get_file_info(pafs.FileSelector(self.root, recursive=True, allow_not_found=True))
        return sorted(posixpath.relpath(i.path, self.root) for i in infos if i.type == pafs.FileType.File)

    def size(self, relative: str) -> int:
        return self.fs.get_file_info(f"{self.root}/{relative}").size

    def read(self, relative: str) -> pa.Table:
        path = f"{self.root}/{relative}"
        if self.fmt == "parquet":
            with self.fs.open_input_file(path) as handle:
                return pq.read_table(handle)
        with self.fs.open_input_stream(path) as handle:
            data = handle.read()
        if self.fmt == "json":
            return pajson.read_json(pa.BufferReader(data)) if data else pa.table({})
        raise ValueError(self.fmt)

    def ids(self, column: str = "id") -> list[int]:
        ids: list[int] = []
        for f in self.files():
            table = self.read(f)
            if table.num_rows:
                ids.extend(table.column(column).to_pylist())
        return sorted(ids)


def local_table(path: Path, fmt: str) -> Table:
    return Table(pafs.LocalFileSystem(), str(path), fmt)


def ids_table(ids, part_of=lambda i: f"p{i % 3}") -> pa.Table:
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()), "part": pa.array([part_of(i) for i in ids], pa.string()),
                     "payload": pa.array([f"record-{i:06d}" for i in ids], pa.string())})
