"""Small JSON files written whole: how a driver, its workers and the job manager hand each other state.

A reader never sees half a file: each write goes to a staging name and is renamed into place.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any, Optional


def write_json(path: Path, value: Any) -> None:
    """Replace ``path`` atomically, so that a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    staging.write_text(json.dumps(value, default=str))
    os.replace(staging, path)


def read_json(path: Path) -> Optional[dict]:
    """The JSON value in ``path``, or None when it is missing or unreadable."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None
