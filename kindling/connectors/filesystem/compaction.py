"""Which staged files of a bucket become one visible file, and when (rolling policy and compaction).

Every micro-batch stages one or more files per bucket and Spark task. The committer keeps the
staged files of each bucket as *pending* until they are published:

* Parquet without ``auto-compaction``: every staged file is published at the checkpoint that
  wrote it (Flink's bulk formats roll on every checkpoint); ``sink.rolling-policy.file-size``
  rolls files within a checkpoint on the executors.
* JSON/CSV without compaction: Flink keeps a row-format part file open across checkpoints and
  rolls it by size and time; here the staged pieces of a bucket are concatenated into one part
  file once they reach ``sink.rolling-policy.file-size``, once the first of them is
  ``sink.rolling-policy.rollover-interval`` old, or once the bucket received nothing for
  ``sink.rolling-policy.inactivity-interval``.
* ``auto-compaction = true``: pending files of a bucket, from every task and from several
  checkpoints, are merged once they add up to ``compaction.file-size`` (concatenation for row
  formats, a record-wise rewrite for Parquet); the rest waits for more data, for the rollover
  interval, for its partition's commit or for the end of the input.

Time is the micro-batch's own timestamp from Spark's offset log, so the decision is the same
when a batch is replayed; it is made when a batch commits (Spark runs no batch while no data
arrives, so an idle bucket is rolled by the next batch with data, or at the end of the input).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kindling.connectors.filesystem.options import FileSystemConfig


@dataclass
class PublishGroup:
    """Staged files that become one visible file."""

    files: list[dict[str, Any]]
    merge: bool


def _effective_size(files: list[dict[str, Any]], parquet: bool) -> int:
    # A merged Parquet file keeps the data pages and has one footer instead of one per input.
    if parquet:
        return sum(f["size"] - f.get("footer", 0) for f in files)
    return sum(f["size"] for f in files)


def plan_bucket(config: FileSystemConfig, pending: dict[str, Any], now_ms: int, flush: bool) -> tuple[list[PublishGroup], dict[str, Any]]:
    """Split a bucket's pending files into groups to publish now and what stays pending."""
    files = list(pending.get("files", []))
    if not files:
        return [], {"files": []}
    parquet = config.format == "parquet"
    if parquet and not config.auto_compaction:
        return [PublishGroup([f], False) for f in files], {"files": []}
    target = config.compaction_file_size if config.auto_compaction else config.file_size
    groups: list[PublishGroup] = []
    current: list[dict[str, Any]] = []
    for f in files:
        current.append(f)
        if _effective_size(current, parquet) >= target:
            groups.append(PublishGroup(current, len(current) > 1))
            current = []
    if current:
        opened = min(f["added"] for f in current)
        updated = max(f["added"] for f in current)
        expired = now_ms - opened >= config.rollover_interval_ms or now_ms - updated >= config.inactivity_interval_ms
        if flush or expired:
            groups.append(PublishGroup(current, len(current) > 1))
            current = []
    return groups, {"files": current}
