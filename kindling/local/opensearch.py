"""A local OpenSearch 3 REST API (the ``osmem-server`` wheel, an in-memory server) for tests and experiments.

``opensearch-py`` works against it. Unlike a real cluster, documents are visible before a refresh.

* :class:`LocalOpenSearch` — owned by the calling process (tests).
* :func:`start_background` / :func:`stop_background` / :func:`status` — a detached server for
  ``kindling local opensearch start|stop|status [--port N]``, tracked by a state file.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from kindling.local import search

DEFAULT_STATE_DIR = Path(".kindling/local/opensearch")


def osmem_binary() -> str:
    """The ``osmem-server`` executable shipped inside the ``osmem-server`` wheel."""
    try:
        from osmem_server import resolve_binary

        path = resolve_binary()
        if not os.access(path, os.X_OK):
            os.chmod(path, 0o755)
        return path
    except ImportError:
        found = shutil.which("osmem-server")
        if found:
            return found
    raise RuntimeError("osmem-server is not installed; kindling's local OpenSearch needs it: pip install 'osmem-server==0.1.6'")


def _command(port: int, host: str, data_dir: Path) -> list[str]:
    # In memory: the data directory only holds the log. -no-stdin-watch: it runs with stdin closed.
    return [osmem_binary(), "-addr", f"{host}:{port}", "-no-stdin-watch", "-no-ja"]


SERVICE = search.SearchService("OpenSearch", b"osmem-server", _command, 9201, "opensearch")


class LocalOpenSearch(search.LocalSearchServer):
    """osmem-server's OpenSearch API on ``host:port``, owned by this process (``url`` = ``http://host:port``)."""

    service = SERVICE
    data_prefix = "kindling-opensearch-"


def status(state_dir: Path = DEFAULT_STATE_DIR) -> dict:
    """The detached server's ``{running, pid, port, url}``."""
    return search.status(SERVICE, state_dir)


def start_background(port: int = SERVICE.default_port, state_dir: Path = DEFAULT_STATE_DIR, host: str = "127.0.0.1",
                     timeout: float = 60) -> dict:
    """Start a detached server on ``host:port``; return its status (``already_running`` if it was)."""
    return search.start_background(SERVICE, port, state_dir, host, timeout)


def stop_background(state_dir: Path = DEFAULT_STATE_DIR, timeout: float = 15) -> bool:
    """Stop the detached server recorded in ``state_dir``; True if one was stopped."""
    return search.stop_background(SERVICE, state_dir, timeout)
