"""A local Elasticsearch 8 REST API (noida-db's Elasticsearch service) for tests, demos and your own experiments.

noida-db answers the REST calls a sink and a reader need (``_bulk`` with index/update/delete, ``_doc``,
``_search``, ``_count``, index creation with mappings, refresh) like Elasticsearch 8.15, product header
included, so the official ``elasticsearch`` 8.x client works against it. Documents become searchable
after a refresh, as in Elasticsearch.

* :class:`LocalElasticsearch` — owned by the calling process (tests): ``start()`` returns once
  ``GET /`` answers; ``stop()`` ends exactly the process it started.
* :func:`start_background` / :func:`stop_background` / :func:`status` — a detached server for
  ``kindling local elasticsearch start|stop|status [--port N]``, tracked by a state file.
"""

from __future__ import annotations

from pathlib import Path

from kindling.local import search
from kindling.local.kafka import noida_binary

DEFAULT_STATE_DIR = Path(".kindling/local/elasticsearch")


def _command(port: int, host: str, data_dir: Path) -> list[str]:
    return [noida_binary(), "start", "--only", "elasticsearch", "--elasticsearch-port", str(port),
            "--host", host, "--data-dir", str(data_dir)]


SERVICE = search.SearchService("Elasticsearch", b"noida-db", _command, 9200, "elasticsearch")


class LocalElasticsearch(search.LocalSearchServer):
    """noida-db's Elasticsearch API on ``host:port``, owned by this process (``url`` = ``http://host:port``)."""

    service = SERVICE
    data_prefix = "kindling-elasticsearch-"


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
