"""What a streaming query's Spark checkpoint says about the input it processed.

Spark's offset log (``offsets/<batch>``) holds, for every planned micro-batch, the end offset of each
source (one JSON line per source, in the query's source order) and the batch's metadata, whose
``batchWatermarkMs`` is the watermark the batch ran with. The commit log (``commits/<batch>``) marks the
batches whose results the sink committed. Together they give the exact input range a checkpoint covers,
micro-batch by micro-batch, and the watermarks the streaming run applied:

* a row read by micro-batch ``b`` was late for a window that had ended by the watermark of batch ``b - 1``
  (Spark drops late rows with the previous batch's watermark: ``getInputWatermarkForLateEvents``);
* a window whose end is at or before the watermark of batch ``N`` was emitted by batch ``N``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional


class CheckpointError(ValueError):
    """The path is not a checkpoint this reconciliation can use; the message says why."""


@dataclass(frozen=True)
class MicroBatch:
    """One planned micro-batch: its id, watermark and each source's end offset (None: not recorded)."""

    batch_id: int
    watermark_ms: int
    ends: tuple[Optional[dict[str, Any]], ...]


class QueryCheckpoint:
    """A streaming query's checkpoint directory (the one holding ``offsets/`` and ``commits/``)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        if not (self.path / "offsets").is_dir():
            raise CheckpointError(f"{self.path} is not a streaming query's checkpoint (it has no offsets/ directory)")

    def committed(self) -> list[int]:
        """The micro-batches whose results were committed, oldest first."""
        return sorted(int(p.name) for p in (self.path / "commits").glob("*") if p.name.isdigit())

    def planned(self) -> list[int]:
        """The micro-batches in the offset log (Spark keeps the last ``minBatchesToRetain``, 100 by default)."""
        return sorted(int(p.name) for p in (self.path / "offsets").glob("*") if p.name.isdigit())

    def last_committed(self) -> int:
        committed = self.committed()
        if not committed:
            raise CheckpointError(f"the checkpoint {self.path} has no committed micro-batch yet: nothing to reconcile")
        return committed[-1]

    def micro_batch(self, batch_id: int) -> MicroBatch:
        path = self.path / "offsets" / str(batch_id)
        try:
            lines = path.read_text().splitlines()
        except FileNotFoundError:
            raise CheckpointError(f"micro-batch {batch_id} is not in the offset log of {self.path}") from None
        if not lines or lines[0].strip() != "v1":
            raise CheckpointError(f"{path}: not an offset log entry of a Spark version kindling reads (first line {lines[:1]})")
        metadata = json.loads(lines[1]) if len(lines) > 1 and lines[1].strip() else {}
        ends = tuple(None if line.strip() in ("", "-") else json.loads(line) for line in lines[2:])
        return MicroBatch(batch_id, int(metadata.get("batchWatermarkMs", 0)), ends)

    def input_range(self, source_index: int, upto: int) -> tuple[list[dict[str, Any]], Optional[int]]:
        """Source ``source_index``'s micro-batches 0..``upto`` as the bounded reader takes them (end offset and
        late-row watermark each), and the first batch id whose late rows cannot be told (the offset log lost the
        batches before it; None when every batch is there)."""
        available = [b for b in self.planned() if b <= upto]
        if not available or available[-1] != upto:
            raise CheckpointError(f"micro-batch {upto} is not in the offset log of {self.path}")
        batches = [self.micro_batch(b) for b in available]
        purged_before = available[0] if available[0] > 0 else None
        ranges: list[dict[str, Any]] = []
        previous_watermark = 0 if purged_before is None else None
        for batch in batches:
            end = batch.ends[source_index] if source_index < len(batch.ends) else None
            if end is not None:
                late = previous_watermark if previous_watermark is not None else 0
                ranges.append({"end": end, "late_watermark_ms": late})
            previous_watermark = batch.watermark_ms
        return ranges, purged_before
