"""What the local search servers (Elasticsearch API, OpenSearch API) share: readiness by a real request,
an owned server for tests, a detached server with a state file for the CLI.

The two services differ only in their command line and their process name, given by
:class:`SearchService` in :mod:`kindling.local.elasticsearch` and :mod:`kindling.local.opensearch`.
"""

from __future__ import annotations

import json
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from kindling.local.process import OwnedServer, StateFile, start_and_wait

_STATE_FILE = "server.json"
_LOG_FILE = "server.log"


@dataclass(frozen=True)
class SearchService:
    """One kind of local search server: its label, how to start it and how to recognise its process."""

    label: str  # "Elasticsearch", "OpenSearch"
    program: bytes  # a byte string in the process's command line (a guard against pid reuse)
    command: Callable[[int, str, Path], list[str]]  # (port, host, data dir) -> argv
    default_port: int
    cli_name: str  # the `kindling local <cli_name>` service name


def server_answers(url: str, timeout: float = 2.0) -> bool:
    """Whether a search server at ``url`` answers ``GET /`` with its version (as both APIs do)."""
    with urllib.request.urlopen(url.rstrip("/") + "/", timeout=timeout) as response:
        info = json.loads(response.read())
    return bool(info.get("version", {}).get("number"))


class LocalSearchServer(OwnedServer):
    """A search server on ``host:port`` owned by this process; ``url`` is ``http://host:port``."""

    service: SearchService

    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("the server has no port until start() is called")
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 60) -> "LocalSearchServer":
        """Start the server; return once ``GET /`` answers with a version."""
        if self.running:
            return self
        self._prepare()
        data = self.data_dir / "data"
        data.mkdir(parents=True, exist_ok=True)
        self._process = start_and_wait(self.service.command(self.port, self.host, data), self._log_path,
                                       lambda: server_answers(self.url), f"the local {self.service.label} server on {self.url}", timeout)
        return self

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"{type(self).__name__}({self.host}:{self.port}, {state})"


def _state(service: SearchService, state_dir: Path) -> StateFile:
    return StateFile(Path(state_dir), _STATE_FILE, service.program)


def status(service: SearchService, state_dir: Path) -> dict:
    """The detached server's state: ``{running, pid, port, url}``; ``running`` only if it answers ``GET /``."""
    state, running = _state(service, state_dir).answering(
        lambda st: server_answers(f"http://{st.get('host', '127.0.0.1')}:{st['port']}"))
    if not state:
        return {"running": False, "pid": None, "port": None, "url": None}
    url = f"http://{state.get('host', '127.0.0.1')}:{state.get('port')}"
    return {"running": running, "pid": state.get("pid"), "port": state.get("port"), "url": url}


def start_background(service: SearchService, port: int, state_dir: Path, host: str = "127.0.0.1", timeout: float = 60) -> dict:
    """Start a detached server that outlives this process (data in ``state_dir/data``); return its status.

    A recorded server that runs and answers is left alone and reported with ``already_running=True``."""
    state_dir = Path(state_dir)
    current = status(service, state_dir)
    if current["running"]:
        return {**current, "already_running": True}
    record = _state(service, state_dir)
    record.refuse_second(f"a local {service.label} server", f"kindling local {service.cli_name} stop")
    data_dir = state_dir / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    url = f"http://{host}:{port}"
    process = start_and_wait(service.command(port, host, data_dir.resolve()), state_dir / _LOG_FILE,
                             lambda: server_answers(url), f"the local {service.label} server on {url}", timeout, detached=True)
    record.write({"pid": process.pid, "port": port, "host": host})
    return {**status(service, state_dir), "already_running": False}


def stop_background(service: SearchService, state_dir: Path, timeout: float = 15) -> bool:
    """Stop the detached server recorded in ``state_dir`` (only that pid); True if one was stopped."""
    return _state(service, state_dir).stop(timeout)
