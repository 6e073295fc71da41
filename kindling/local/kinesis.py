"""A local Kinesis Data Streams API server (npm ``kinesis-local``) on 127.0.0.1, for tests and the CLI.

kinesis-local (etspaceman/kinesis-mock compiled to JavaScript) is the most faithful Kinesis API server
that installs here: resharding (split, merge, ``UpdateShardCount``), child shards, stream consumers and
``SubscribeToShard``. ``make setup`` installs it into ``.kindling/node`` (``npm install --prefix``);
``KINDLING_KINESIS_LOCAL`` may name another ``main.js``.

How it is started:

* kinesis-local binds 0.0.0.0 in its code. ``kinesis_loopback.js`` is preloaded (``node --require``)
  and rewrites every ``listen()`` to 127.0.0.1, so it is reachable from loopback only.
* Plain HTTP on ``KINESIS_MOCK_PLAIN_PORT`` (the port kindling reports), TLS on ``KINESIS_MOCK_TLS_PORT``
  (a second free port; unused by kindling).
* Every ``*_DURATION`` variable is ``0ms``: streams, reshards and consumers are ACTIVE at once.
* Readiness is a real ``ListStreams`` request. Data lives in memory and is gone when the server stops.

It accepts any credentials (a signed request with any access key) and any region; it is slow
(~300-500 records/s through ``PutRecords``), so tests keep their data small.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import urllib.request
from pathlib import Path
from typing import Any, Optional

from kindling.local.ports import free_ports, wait_until
from kindling.local.process import OwnedServer, StateFile, start_and_wait

ROOT = Path(__file__).resolve().parents[2]
NODE_PREFIX = ROOT / ".kindling" / "node"
PACKAGE = "kinesis-local"
PRELOAD = Path(__file__).with_name("kinesis_loopback.js")
DEFAULT_STATE_DIR = Path(".kindling/local/kinesis")
_STATE_FILE = "kinesis.json"
_LOG_FILE = "kinesis.log"
_PROGRAM = b"kinesis-local"
DEFAULT_REGION = "us-east-1"
# Credentials the local server accepts (it checks that a request is signed, not by whom).
LOCAL_ACCESS_KEY = "kindling-local"
LOCAL_SECRET_KEY = "kindling-local-secret"
SHARD_LIMIT = 500
_DURATIONS = (
    "CREATE_STREAM_DURATION", "DELETE_STREAM_DURATION", "REGISTER_STREAM_CONSUMER_DURATION",
    "START_STREAM_ENCRYPTION_DURATION", "STOP_STREAM_ENCRYPTION_DURATION", "DEREGISTER_STREAM_CONSUMER_DURATION",
    "MERGE_SHARDS_DURATION", "SPLIT_SHARD_DURATION", "UPDATE_SHARD_COUNT_DURATION", "UPDATE_STREAM_MODE_DURATION",
)


def main_js() -> Path:
    """kinesis-local's ``main.js``; an error saying how to install it when it is missing."""
    override = os.environ.get("KINDLING_KINESIS_LOCAL")
    candidates = [Path(override)] if override else []
    candidates.append(NODE_PREFIX / "node_modules" / PACKAGE / "main.js")
    for path in candidates:
        if path.is_file():
            return path
    raise RuntimeError(
        f"kinesis-local is not installed (looked for {', '.join(str(p) for p in candidates)}); run `make setup`, or "
        f"`npm install --prefix {NODE_PREFIX} {PACKAGE}`, or set KINDLING_KINESIS_LOCAL to its main.js"
    )


def _node() -> str:
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        raise RuntimeError("Node.js is not installed; run `make setup` (Debian: `apt-get install nodejs npm`)")
    return node


def _command() -> list[str]:
    # The program name stays on the command line so that a recorded pid can be checked (StateFile).
    return [_node(), "--require", str(PRELOAD), str(main_js())]


def _environment(port: int, tls_port: int) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "KINESIS_MOCK_PLAIN_PORT": str(port),
        "KINESIS_MOCK_TLS_PORT": str(tls_port),
        "KINESIS_MOCK_CERT_PATH": str(main_js().with_name("server.json")),
        "KINDLING_BIND_HOST": "127.0.0.1",
        "LOG_LEVEL": env.get("KINDLING_KINESIS_LOG_LEVEL", "WARN"),
        "SHOULD_PERSIST_DATA": "false",
        "AWS_REGION": DEFAULT_REGION,
        # kinesis-mock allows 50 open shards per server; AWS's own quota is 500 (200 in smaller regions). A test
        # session's streams share one server, so 50 made a reshard fail once enough streams existed.
        "SHARD_LIMIT": env.get("SHARD_LIMIT", str(SHARD_LIMIT)),
    })
    env.update({name: "0ms" for name in _DURATIONS})
    return env


def server_answers(endpoint: str, timeout: float = 3.0) -> bool:
    """Whether ``endpoint`` answers a Kinesis ``ListStreams`` request (signed with a dummy signature,
    which the local server accepts)."""
    request = urllib.request.Request(
        endpoint.rstrip("/") + "/", data=b"{}", method="POST",
        headers={
            "X-Amz-Target": "Kinesis_20131202.ListStreams",
            "Content-Type": "application/x-amz-json-1.1",
            "X-Amz-Date": time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()),
            "Authorization": f"AWS4-HMAC-SHA256 Credential={LOCAL_ACCESS_KEY}/20260101/{DEFAULT_REGION}/kinesis/"
                             "aws4_request, SignedHeaders=host, Signature=0",
        },
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return "StreamNames" in json.loads(response.read())


def _start(port: int, tls_port: int, log_path: Path, cwd: Path, timeout: float, detached: bool):
    endpoint = f"http://127.0.0.1:{port}"
    return start_and_wait(_command(), log_path, lambda: server_answers(endpoint), f"kinesis-local on {endpoint}",
                          timeout, detached=detached, env=_environment(port, tls_port), cwd=cwd)


class LocalKinesis(OwnedServer):
    """A kinesis-local server on ``127.0.0.1:port`` owned by this process.

    >>> with LocalKinesis() as kinesis:
    ...     kinesis.create_stream("clicks", shards=4)
    ...     print(kinesis.endpoint)
    """

    data_prefix = "kindling-kinesis-"

    def stop(self, timeout: float = 2) -> None:
        """Stop the server. Its data lives in memory, so there is nothing to save, while on SIGTERM it waits for
        clients' keep-alive connections to close (15 s after a test session): SIGKILL follows after 2 s."""
        super().stop(timeout)

    @property
    def endpoint(self) -> str:
        if self.port is None:
            raise RuntimeError("the server has no port until start() is called")
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 60) -> "LocalKinesis":
        """Start the server; return once it answers ``ListStreams``."""
        if self.running:
            return self
        log_path = self._prepare()
        self._process = _start(self.port, free_ports(1, avoid=[self.port])[0], log_path, self.data_dir, timeout, detached=False)
        return self

    def client(self, region: str = DEFAULT_REGION) -> Any:
        """A boto3 Kinesis client for this server (local credentials, a few retries)."""
        return local_client(self.endpoint, region)

    def create_stream(self, name: str, shards: int = 1, timeout: float = 30) -> None:
        """Create a stream and wait until it is ACTIVE."""
        client = self.client()
        client.create_stream(StreamName=name, ShardCount=shards)
        wait_active(client, name, timeout)

    def delete_stream(self, name: str) -> None:
        """Delete a stream; a stream that does not exist is not an error."""
        client = self.client()
        try:
            client.delete_stream(StreamName=name, EnforceConsumerDeletion=True)
        except client.exceptions.ResourceNotFoundException:
            pass

    def __repr__(self) -> str:
        return f"LocalKinesis({self.host}:{self.port}, {'running' if self.running else 'stopped'})"


def local_client(endpoint: str, region: str = DEFAULT_REGION) -> Any:
    """A boto3 Kinesis client for a local server."""
    import boto3
    from botocore.config import Config

    return boto3.client(
        "kinesis", endpoint_url=endpoint, region_name=region, aws_access_key_id=LOCAL_ACCESS_KEY,
        aws_secret_access_key=LOCAL_SECRET_KEY, config=Config(retries={"max_attempts": 3, "mode": "standard"}),
    )


def wait_active(client: Any, stream: str, timeout: float = 30) -> None:
    """Wait until a stream is ACTIVE (after create, split, merge or UpdateShardCount)."""
    wait_until(lambda: client.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"]["StreamStatus"] == "ACTIVE",
               timeout, f"Kinesis stream {stream!r} to become ACTIVE", interval=0.05)


# ----------------------------------------------------------------------------------------------
# A detached server for the CLI: `kindling local kinesis start|stop|status [--port N]`
# ----------------------------------------------------------------------------------------------


def _state(state_dir: Path) -> StateFile:
    return StateFile(Path(state_dir), _STATE_FILE, _PROGRAM)


def status(state_dir: Path = DEFAULT_STATE_DIR) -> dict:
    """The detached server's state: ``{running, pid, port, url}``; ``running`` only when the recorded pid
    is kinesis-local *and* it answers ``ListStreams``."""
    state, running = _state(state_dir).answering(lambda st: server_answers(f"http://127.0.0.1:{st['port']}"))
    if not state:
        return {"running": False, "pid": None, "port": None, "url": None}
    return {"running": running, "pid": state.get("pid"), "port": state.get("port"), "url": f"http://127.0.0.1:{state.get('port')}"}


def start_background(port: int = 4568, state_dir: Path = DEFAULT_STATE_DIR, timeout: float = 60) -> dict:
    """Start a detached kinesis-local on ``127.0.0.1:port`` that outlives this process; return its :func:`status`
    (with ``already_running=True`` when the recorded one already answers)."""
    state_dir = Path(state_dir)
    current = status(state_dir)
    if current["running"]:
        return {**current, "already_running": True}
    record = _state(state_dir)
    record.refuse_second("a local Kinesis server", "kindling local kinesis stop")
    state_dir.mkdir(parents=True, exist_ok=True)
    process = _start(port, free_ports(1, avoid=[port])[0], state_dir / _LOG_FILE, state_dir.resolve(), timeout, detached=True)
    record.write({"pid": process.pid, "port": port, "host": "127.0.0.1"})
    return {**status(state_dir), "already_running": False}


def stop_background(state_dir: Path = DEFAULT_STATE_DIR, timeout: float = 15) -> bool:
    """Stop the detached server recorded in ``state_dir`` (only that pid); True if one was stopped."""
    return _state(state_dir).stop(timeout)


def endpoint_of(state_dir: Path = DEFAULT_STATE_DIR) -> Optional[str]:
    """The running detached server's URL, or None."""
    info = status(state_dir)
    return info["url"] if info["running"] else None
