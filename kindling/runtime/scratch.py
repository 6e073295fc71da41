"""Checkpoint directories of finished throwaway queries (a SELECT's collect, ``execute_and_collect``), removed once
Spark is done with them.

Spark's RocksDB state store writes a stopped query's last snapshot from a maintenance thread; removing the
query's checkpoint directory as soon as the query ended made that thread log a FileNotFoundException with a
page of stack trace after results that were complete. A retired directory is removed once it has rested for
``GRACE_S`` seconds (when a later one is retired), and the rest when the program exits.
"""

from __future__ import annotations

import atexit
import shutil
import threading
import time
from pathlib import Path

GRACE_S = 30.0
_retired: list[tuple[float, Path]] = []
_lock = threading.Lock()
_at_exit: list[bool] = []


def retire(path: Path) -> None:
    """Remove ``path`` (a finished query's checkpoint directory) later, when nothing writes to it any more."""
    now = time.monotonic()
    with _lock:
        due = [p for t, p in _retired if now - t >= GRACE_S]
        _retired[:] = [(t, p) for t, p in _retired if now - t < GRACE_S] + [(now, Path(path))]
        if not _at_exit:
            atexit.register(_remove_all)
            _at_exit.append(True)
    for p in due:
        shutil.rmtree(p, ignore_errors=True)


def _remove_all() -> None:
    with _lock:
        paths = [p for _, p in _retired]
        _retired.clear()
    for p in paths:
        shutil.rmtree(p, ignore_errors=True)


__all__ = ["GRACE_S", "retire"]
