"""A local Kafka-protocol broker (noida-db's Kafka service) for the embedded default and for tests.

Two ways to run one:

* :class:`LocalKafka` — owned by the calling process (tests, benchmarks): ``start()`` returns once a
  real Kafka metadata request succeeds, ``stop()`` ends exactly the process it started.
* :func:`start_background` / :func:`stop_background` / :func:`status` — a detached broker that
  outlives the CLI call (``kindling local kafka start|stop|status``), tracked by a state file.

noida-db keeps topics in memory and saves one JSON file in its data directory; keep topics small.
It prints a harmless glibc warning on stderr, which is not treated as a failure. It applies
``retention.ms`` (7 days) by record timestamp: produce records with current timestamps.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from kindling.local.ports import wait_until
from kindling.local.process import OwnedServer, StateFile, start_and_wait

DEFAULT_STATE_DIR = Path(".kindling/local/kafka")
_STATE_FILE = "broker.json"
_LOG_FILE = "broker.log"


def noida_binary() -> str:
    """The noida-db server executable.

    The ``noida-db`` script in the venv's bin directory is a Python wrapper that runs the real
    binary as a *child* process; signalling the wrapper would not stop the server. So the
    binary shipped inside the ``noida_db`` package is preferred, and the wrapper is the fallback.
    """
    try:
        from importlib.resources import files

        binary = files("noida_db").joinpath("noida-db")
        if binary.is_file():
            path = str(binary)
            if not os.access(path, os.X_OK):
                try:
                    os.chmod(path, 0o755)
                except OSError:
                    pass
            return path
    except (ImportError, ModuleNotFoundError):
        pass
    beside = Path(sys.executable).parent / "noida-db"
    if beside.exists():
        return str(beside)
    found = shutil.which("noida-db")
    if found:
        return found
    raise RuntimeError(
        "noida-db is not installed; kindling's local Kafka needs it: pip install 'noida-db==0.2.3'"
    )


def _command(port: int, host: str, data_dir: Path) -> list[str]:
    return [
        noida_binary(), "start", "--only", "kafka",
        "--kafka-port", str(port), "--host", host, "--data-dir", str(data_dir),
    ]


def broker_answers(bootstrap_servers: str, timeout: float = 2.0) -> bool:
    """Whether a Kafka broker answers a metadata request at ``bootstrap_servers``."""
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap_servers, "socket.connection.setup.timeout.ms": 2000})
    metadata = admin.list_topics(timeout=timeout)
    return bool(metadata.brokers)


class LocalKafka(OwnedServer):
    """A noida-db Kafka broker on ``host:port`` owned by this process.

    >>> with LocalKafka() as kafka:
    ...     kafka.create_topic("clicks", partitions=4)
    ...     print(kafka.bootstrap_servers)
    """

    data_prefix = "kindling-kafka-"

    @property
    def bootstrap_servers(self) -> str:
        if self.port is None:
            raise RuntimeError("the broker has no port until start() is called")
        return f"{self.host}:{self.port}"

    def start(self, timeout: float = 60) -> "LocalKafka":
        """Start the broker; return once it answers a Kafka metadata request."""
        if self.running:
            return self
        self._prepare()
        self._process = start_and_wait(
            _command(self.port, self.host, self.data_dir), self._log_path,
            lambda: broker_answers(self.bootstrap_servers), f"the local Kafka broker on {self.bootstrap_servers}", timeout,
        )
        return self

    def _admin(self):
        from confluent_kafka.admin import AdminClient

        return AdminClient({"bootstrap.servers": self.bootstrap_servers})

    def create_topic(self, name: str, partitions: int = 1, timeout: float = 30) -> None:
        """Create a topic and wait until its metadata shows every partition."""
        from confluent_kafka.admin import NewTopic

        admin = self._admin()
        futures = admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1)])
        futures[name].result(timeout=timeout)

        def visible() -> bool:
            topic = admin.list_topics(topic=name, timeout=5).topics.get(name)
            return topic is not None and topic.error is None and len(topic.partitions) == partitions

        wait_until(visible, timeout, f"topic {name!r} with {partitions} partitions")

    def delete_topic(self, name: str, timeout: float = 30) -> None:
        """Delete a topic; a topic that does not exist is not an error."""
        from confluent_kafka import KafkaError, KafkaException

        admin = self._admin()
        try:
            admin.delete_topics([name], operation_timeout=timeout)[name].result(timeout=timeout)
        except KafkaException as exc:
            if exc.args and getattr(exc.args[0], "code", lambda: None)() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                return
            raise

    def topics(self) -> list[str]:
        return sorted(self._admin().list_topics(timeout=10).topics)

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"LocalKafka({self.host}:{self.port}, {state})"


# ----------------------------------------------------------------------------------------------
# A detached broker for the CLI: `kindling local kafka start|stop|status [--port N]`
# ----------------------------------------------------------------------------------------------


def _state(state_dir: Path) -> StateFile:
    return StateFile(Path(state_dir), _STATE_FILE, b"noida-db")


def status(state_dir: Path = DEFAULT_STATE_DIR) -> dict:
    """The detached broker's state: ``{running, pid, port, bootstrap_servers}``.

    ``running`` is true only when the pid in the state file is a live noida-db process *and* it
    answers a Kafka metadata request. With no state file every value but ``running`` is None.
    """
    state, running = _state(state_dir).answering(lambda st: broker_answers(f"{st.get('host', '127.0.0.1')}:{st['port']}"))
    if not state:
        return {"running": False, "pid": None, "port": None, "bootstrap_servers": None}
    servers = f"{state.get('host', '127.0.0.1')}:{state.get('port')}"
    return {"running": running, "pid": state.get("pid"), "port": state.get("port"), "bootstrap_servers": servers}


def start_background(port: int = 9092, state_dir: Path = DEFAULT_STATE_DIR, host: str = "127.0.0.1", timeout: float = 60) -> dict:
    """Start a detached broker on ``host:port`` that outlives this process; return its :func:`status`.

    The broker runs in its own session (Ctrl-C in the calling terminal does not reach it), keeps its
    data in ``state_dir/data``, logs to ``state_dir/broker.log`` and is recorded in
    ``state_dir/broker.json`` (pid, port, host). If the state file names a broker that is running
    and answering, nothing is started and its status is returned with ``already_running=True``.
    """
    state_dir = Path(state_dir)
    current = status(state_dir)
    if current["running"]:
        return {**current, "already_running": True}
    record = _state(state_dir)
    record.refuse_second("a local Kafka broker", "kindling local kafka stop")
    data_dir = state_dir / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    servers = f"{host}:{port}"
    process = start_and_wait(_command(port, host, data_dir.resolve()), state_dir / _LOG_FILE,
                             lambda: broker_answers(servers), f"the local Kafka broker on {servers}", timeout, detached=True)
    record.write({"pid": process.pid, "port": port, "host": host})
    return {**status(state_dir), "already_running": False}


def stop_background(state_dir: Path = DEFAULT_STATE_DIR, timeout: float = 15) -> bool:
    """Stop the detached broker recorded in ``state_dir`` (only that pid); True if one was stopped.

    Data stays in ``state_dir/data`` for the next start. A stale state file is removed.
    """
    return _state(state_dir).stop(timeout)
