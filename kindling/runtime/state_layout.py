"""Which layout a sink's checkpoint keeps kindling's keyed state in, checked before a job resumes from it.

Keyed operators store state by key group (``pipeline.max-parallelism`` hash buckets of the key).
Checkpoints written before key groups existed hold one state entry per key, which Spark cannot
read under the new grouping: resuming from one must stop with a message that names the job and
operator and says what to do, not with Spark's schema error a minute into the run. A changed
key-group count would silently give keys another key's state, so it is refused the same way.

Key groups were first kept under their numbers, which Spark's hash partitioning spreads unevenly
(74 of 128 in one of two partitions); they are now kept under grouping values it spreads evenly
(``kindling.runtime.hash_partitioning``), so a checkpoint of the first layout is refused too.

Each sink checkpoint with keyed state gets a small marker file naming the layout and the count.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

MARKER = "_kindling_keyed_state.json"
LAYOUT = "balanced-key-groups"
NUMBERED_LAYOUT = "key-groups"  # key groups under their numbers (kindling before balanced key groups)


class StateLayoutError(ValueError):
    """A checkpoint's keyed state cannot be read by this pipeline; the message says why and what to do."""


def _has_batches(checkpoint: Path) -> bool:
    return (checkpoint / "commits").is_dir() and any((checkpoint / "commits").glob("[0-9]*"))


def check_and_record(checkpoint: Path, job: str, uid: str, operators: list[str], max_parallelism: int) -> None:
    """Refuse a checkpoint whose keyed state this pipeline cannot read; mark a new one with its layout.

    ``operators`` names the sink's keyed operators (empty: the sink has none, nothing to check).
    """
    if not operators:
        return
    marker = checkpoint / MARKER
    recorded: Optional[dict] = json.loads(marker.read_text()) if marker.is_file() else None
    names = ", ".join(f"'{o}'" for o in operators)
    if recorded is None and _has_batches(checkpoint) and (checkpoint / "state").is_dir():
        raise StateLayoutError(
            f"job '{job}': the checkpoint of sink '{uid}' in {checkpoint} holds the keyed state of {names} in the per-key "
            "layout of kindling before key groups, which this kindling cannot read. To start with empty state, give "
            "the job another name (or delete that directory); to keep the state, finish the job with the kindling "
            "version that wrote it.")
    if recorded is not None and recorded.get("layout") == NUMBERED_LAYOUT:
        raise StateLayoutError(
            f"job '{job}': the checkpoint of sink '{uid}' in {checkpoint} holds the keyed state of {names} under "
            "key-group numbers, the layout of kindling before key groups were spread evenly over Spark's shuffle "
            "partitions, which this kindling cannot read. To start with empty state, give the job another name (or "
            "delete that directory); to keep the state, finish the job with the kindling version that wrote it.")
    if recorded is not None and recorded.get("layout") != LAYOUT:
        raise StateLayoutError(
            f"job '{job}': the checkpoint of sink '{uid}' in {checkpoint} holds the keyed state of {names} in a layout "
            f"this kindling does not know ({recorded.get('layout')!r}; it reads {LAYOUT!r}): it was written by a newer "
            "kindling. Run the job with that version, or give the job another name to start with empty state.")
    if recorded is not None and recorded.get("maxParallelism") != max_parallelism:
        raise StateLayoutError(
            f"job '{job}': the keyed state of {names} (sink '{uid}') was written with pipeline.max-parallelism="
            f"{recorded.get('maxParallelism')} and this run has {max_parallelism}. Like Flink's, it cannot change for the "
            f"life of a job's state: set pipeline.max-parallelism = {recorded.get('maxParallelism')}.")
    if recorded is None:
        checkpoint.mkdir(parents=True, exist_ok=True)
        marker.write_text(json.dumps({"layout": LAYOUT, "maxParallelism": max_parallelism}))
