"""A restarted query fires what its restored watermark allows, as Flink does, without waiting for new input.

Spark plans a micro-batch when a source has new data or when the *previous batch's execution*
says that a newer watermark would evict state (``shouldRunAnotherBatch``: windows to close,
event-time timers to fire). After a restart there is no previous execution in memory: when the
checkpoint's last batch was committed, Spark restores the watermark that batch advanced (the commit
log's ``nextBatchWatermarkMs``) but plans no batch until a source has new data. A job killed (or
stopped for a savepoint) after a batch that consumed its last input, and before the follow-up
no-data batch, would hold its last windows back indefinitely.

Before a query starts, :func:`plan_owed_watermark_batch` writes the batch Spark would have planned
itself: the next offset-log entry with the same source offsets (no data) and the restored watermark.
Spark then runs it as the planned-but-uncommitted batch a restart always replays, which evaluates
every stateful operator with the restored watermark and writes its results through the sink.
"""

from __future__ import annotations

import json
import logging
import os
import time
from pathlib import Path
from typing import Optional

log = logging.getLogger("kindling.recovery")

NO_DATA_BATCHES_CONF = "spark.sql.streaming.noDataMicroBatches.enabled"


def _local_path(checkpoint: str) -> Optional[Path]:
    if checkpoint.startswith("file://"):
        return Path(checkpoint[len("file://"):])
    if "://" in checkpoint:
        return None
    return Path(checkpoint)


def _latest(directory: Path) -> Optional[int]:
    if not directory.is_dir():
        return None
    ids = [int(p.name) for p in directory.iterdir() if p.name.isdigit()]
    return max(ids, default=None)


def _has_state(checkpoint: Path) -> bool:
    state = checkpoint / "state"
    return state.is_dir() and any(state.iterdir())


def owed_watermark(checkpoint: Path) -> Optional[tuple[int, int]]:
    """``(batch id, watermark)`` of the no-data batch a restart of this checkpoint owes, or None.

    One is owed when the last planned batch was committed, the query keeps state, and the commit
    recorded a watermark for the next batch later than the one the last batch ran with.
    """
    offsets, commits = checkpoint / "offsets", checkpoint / "commits"
    last_planned, last_committed = _latest(offsets), _latest(commits)
    if last_planned is None or last_planned != last_committed or not _has_state(checkpoint):
        return None
    planned = (offsets / str(last_planned)).read_text().splitlines()
    committed = (commits / str(last_committed)).read_text().splitlines()
    if len(planned) < 2 or len(committed) < 2:
        return None
    ran_with = json.loads(planned[1]).get("batchWatermarkMs", 0)
    next_watermark = json.loads(committed[1]).get("nextBatchWatermarkMs", 0)
    if next_watermark <= ran_with:
        return None
    return last_planned + 1, int(next_watermark)


def plan_owed_watermark_batch(checkpoint: str, now_ms: Optional[int] = None) -> Optional[int]:
    """Log the no-data batch a restart of ``checkpoint`` owes (see the module's doc); return its id, or None.

    Only local checkpoint paths are looked at (``file://`` or a plain path); a query on another file
    system starts as Spark starts it.
    """
    path = _local_path(checkpoint)
    if path is None or not path.is_dir():
        return None
    owed = owed_watermark(path)
    if owed is None:
        return None
    batch_id, watermark = owed
    offsets = path / "offsets"
    lines = (offsets / str(batch_id - 1)).read_text().splitlines()
    metadata = json.loads(lines[1])
    metadata["batchWatermarkMs"] = watermark
    metadata["batchTimestampMs"] = int(time.time() * 1000) if now_ms is None else now_ms
    text = "\n".join([lines[0], json.dumps(metadata, separators=(",", ":")), *lines[2:]])
    staging = offsets / f".{batch_id}.kindling.tmp"
    staging.write_text(text)
    (offsets / f".{batch_id}.crc").unlink(missing_ok=True)  # a checksum of some other content would fail the read
    os.replace(staging, offsets / str(batch_id))
    log.info("checkpoint %s: planned no-data batch %d with the restored watermark %d", checkpoint, batch_id, watermark)
    return batch_id
