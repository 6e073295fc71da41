"""The fork server: a worker forked from the warm interpreter behaves as ``python -m module`` started cold would."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kindling.runtime import worker_forks

PROBE = """
import os, sys
print("argv", sys.argv[1:])
print("cwd", os.getcwd())
print("env", os.environ.get("PROBE_VALUE"))
print("client's parent", os.environ.get("KINDLING_FORK_PARENT"))
print("stdin", sys.stdin.readline().strip())
print("pid", os.getpid())
print("to stderr", file=sys.stderr)
if sys.argv[1:] == ["reset"]:
    raise ConnectionResetError(104, "Connection reset by peer")
if sys.argv[1:] == ["fail"]:
    raise ValueError("the probe failed")
if sys.argv[1:] == ["wait"]:
    print("waiting", flush=True)
    import time
    time.sleep(60)
sys.exit(int(sys.argv[-1]) if sys.argv[-1].isdigit() else 0)
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("forks")
    (folder / "fork_probe.py").write_text(PROBE)
    path = str(folder / "socket")
    process = subprocess.Popen([sys.executable, "-m", "kindling.runtime.worker_forks", path, "fork_probe"],
                               stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, env=worker_forks.server_environment())
    deadline = time.monotonic() + 60
    while not Path(path).exists():
        assert process.poll() is None and time.monotonic() < deadline, "the fork server did not start listening (a thread?)"
        time.sleep(0.05)
    yield {"socket": path, "modules": str(folder), "process": process}
    process.stdin.close()
    assert process.wait(timeout=10) == 0
    assert not Path(path).exists()


def _client(server: dict, module: str, *args: str, cwd: Path, socket_path: str | None = None) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": server["modules"], "PROBE_VALUE": "from the client",
           worker_forks.SOCKET_VARIABLE: socket_path or server["socket"]}
    return subprocess.Popen([sys.executable, "-I", "-S", "-c", worker_forks.CLIENT, "-m", module, *args], cwd=cwd, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _children(server_pid: int) -> set[int]:
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == server_pid:
                found.add(int(entry.name))
    return found


def test_a_forked_worker_takes_the_clients_arguments_directory_environment_streams_and_exit_status(server, tmp_path):
    client = _client(server, "fork_probe", "a b", "3", cwd=tmp_path)
    out, err = client.communicate("line on stdin\n", timeout=60)
    lines = out.splitlines()
    # the client's parent (the JVM, for Spark's workers) is named: a forked worker's own parent is the server
    assert lines[:5] == ["argv ['a b', '3']", f"cwd {tmp_path}", "env from the client", f"client's parent {os.getpid()}",
                         "stdin line on stdin"]
    assert "to stderr" in err
    assert client.returncode == 3
    forked_pid = int(lines[5].split()[1])
    assert forked_pid != client.pid  # the server's child ran the module, not the client's interpreter


def test_the_client_passes_a_signal_on_to_the_forked_worker(server, tmp_path):
    client = _client(server, "fork_probe", "wait", cwd=tmp_path)
    client.stdin.write("x\n")
    client.stdin.flush()
    lines = []
    while not lines or lines[-1] != "waiting":
        lines.append(client.stdout.readline().strip())
    forked_pid = int(lines[-2].split()[1])
    assert forked_pid in _children(server["process"].pid)
    client.send_signal(signal.SIGTERM)
    assert client.wait(timeout=30) != 0
    deadline = time.monotonic() + 30
    while Path(f"/proc/{forked_pid}").exists() and (Path(f"/proc/{forked_pid}/stat").read_text().split()[2] != "Z"):
        assert time.monotonic() < deadline, "the forked worker outlived its client's SIGTERM"
        time.sleep(0.05)


def test_a_worker_whose_connection_the_jvm_closed_exits_without_a_traceback_and_any_other_error_prints_one(server, tmp_path):
    """Spark stops a worker by closing its socket and signalling it; a worker that sees the closed socket first has
    no one to report to, and its traceback is noise. Any other uncaught error prints as ``python -m`` would."""
    reset = _client(server, "fork_probe", "reset", cwd=tmp_path)
    _out, err = reset.communicate("x\n", timeout=60)
    assert reset.returncode == 1
    assert "to stderr" in err and "Traceback" not in err and "ConnectionResetError" not in err
    failed = _client(server, "fork_probe", "fail", cwd=tmp_path)
    _out, err = failed.communicate("x\n", timeout=60)
    assert failed.returncode == 1
    assert "Traceback" in err and "ValueError: the probe failed" in err


def test_without_a_server_or_for_another_module_the_client_runs_the_interpreter(server, tmp_path):
    for socket_path, module in ((str(tmp_path / "none"), "fork_probe"), (server["socket"], "fork_probe_copy")):
        (Path(server["modules"]) / "fork_probe_copy.py").write_text(PROBE)
        client = _client(server, module, "5", cwd=tmp_path, socket_path=socket_path)
        out, _ = client.communicate("x\n", timeout=60)
        assert client.returncode == 5 and out.splitlines()[0] == "argv ['5']"
        assert int(out.splitlines()[5].split()[1]) == client.pid  # the client became the interpreter (exec)


def _argv(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


@pytest.mark.integration
def test_a_sessions_planner_daemons_are_forked_warm(spark):
    # Registering kindling's connectors made the JVM look up the installed data sources through a `pyspark.daemon` of
    # its own (every planning step of a Python data source has one); it runs PYSPARK_DRIVER_PYTHON, which must be the
    # workers' launcher.
    jvm = spark.sparkContext._gateway.proc.pid
    daemons = {pid: _argv(pid) for pid in _children(jvm) if "pyspark.daemon" in _argv(pid)}
    modules = {argv[argv.index("pyspark.daemon") + 1] for argv in daemons.values()}
    assert "pyspark.sql.worker.lookup_data_sources" in modules, daemons
    cold = [argv for argv in daemons.values() if "-c" not in argv]  # the fork client runs as `python -I -S -c ...`
    assert not cold, f"planner daemons started cold instead of forked: {cold}"
