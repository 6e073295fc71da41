"""Whether the query a source scan feeds keeps event-time state, told by the runtime to the scan's reader.

Sources that keep Flink's watermark per split (Kafka partitions, Kinesis shards) hold a partition back
so that Spark's single watermark — the largest event time seen minus the out-of-orderness — never
makes a slower partition's records late. That only matters to an operator that drops late records
or fires on the watermark (a window, an interval join, event-time timers). A query without one (a
copy, a filter, a projection) gains nothing from the hold and, on a quiet partition, would stall
where Flink keeps copying: Flink holds back the watermark, never the records.

A scan carries a fresh id (``TABLE_SCAN``). Before a job's queries start, the runtime inspects their
plans and marks the scans that feed only queries without event-time state; a reader created for a
marked scan admits every partition as it comes. The marks are files in a directory scoped to the
Spark application (as alignment groups are), so the source runner processes see them.
"""

from __future__ import annotations

import os
import re
import tempfile
import uuid
from pathlib import Path
from typing import Iterable, Optional


def new_scan_id() -> str:
    """A fresh id for one scan of a table."""
    return uuid.uuid4().hex


def _directory() -> Path:
    scope = os.environ.get("KINDLING_SESSION_ID", "default")
    return Path(tempfile.gettempdir()) / "kindling-watermark-use" / scope


def _marker(scan_id: str) -> Path:
    return _directory() / f"{re.sub(r'[^A-Za-z0-9_-]+', '-', scan_id)}.stateless"


def declare(stateless: Iterable[str], stateful: Iterable[str]) -> None:
    """Mark ``stateless`` scans as feeding no event-time state; clear any mark on ``stateful`` ones."""
    for scan_id in stateful:
        _marker(scan_id).unlink(missing_ok=True)
    for scan_id in stateless:
        marker = _marker(scan_id)
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()


def feeds_event_time_state(scan_id: Optional[str]) -> bool:
    """Whether a reader of this scan must keep its per-split hold: yes unless the runtime said otherwise."""
    return scan_id is None or not _marker(scan_id).exists()
