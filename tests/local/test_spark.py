"""The local Spark standalone cluster's process handling and CLI, without starting Spark (see the
``spark_cluster`` fixture and tests/playground/test_click_count_cluster.py for the cluster itself)."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from kindling.cli import main
from kindling.local.process import alive
from kindling.local.spark import descendants, kill_tree, spark_home
from kindling.runtime.session import _loopback_master


def test_the_wheel_has_the_daemons_launcher():
    assert (spark_home() / "bin" / "spark-class").is_file()
    assert any(p.name.startswith("spark-core") for p in (spark_home() / "jars").iterdir())


def test_kill_tree_takes_a_worker_with_its_executor_and_python_workers():
    # A parent with a child with a grandchild, like a worker JVM, its executor and a Python worker.
    parent = subprocess.Popen([sys.executable, "-c", "import subprocess, sys; subprocess.run(['sh', '-c', 'sleep 60 & wait'])"])
    deadline = time.monotonic() + 30
    while len(descendants(parent.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)  # polling /proc for the children to appear
    below = descendants(parent.pid)
    assert len(below) == 2
    assert set(kill_tree(parent.pid)) == {parent.pid, *below}
    parent.wait(timeout=10)
    deadline = time.monotonic() + 10
    while any(alive(pid) for pid in below) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in below)


def test_status_without_a_cluster_says_so_and_exits_3(tmp_path, capsys):
    assert main(["local", "spark", "status", "--state-dir", str(tmp_path)]) == 3
    assert json.loads(capsys.readouterr().out)["running"] is False
    assert main(["local", "spark", "stop", "--state-dir", str(tmp_path)]) == 0
    assert "no Spark cluster started by kindling is running" in capsys.readouterr().out


def test_only_a_standalone_master_on_this_machine_binds_the_driver_to_loopback():
    assert _loopback_master("spark://127.0.0.1:7077")
    assert _loopback_master("spark://localhost:7077")
    assert not _loopback_master("spark://10.0.0.5:7077")
    assert not _loopback_master("yarn")
    assert not _loopback_master("k8s://https://127.0.0.1:6443")
