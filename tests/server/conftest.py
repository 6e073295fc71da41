"""One job manager for the server tests, started the way a user starts it (``kindling cluster start``)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator

import pytest
from server_helpers import ROOT, kindling


@pytest.fixture(scope="session")
def jobmanager() -> Iterator[dict]:
    """A job manager on a free loopback port with its records in a temp dir; stopped (with its drivers) at the end."""
    from kindling.local.ports import free_port

    # Not under pytest's temp root: pytest runs started meanwhile may prune it while drivers still write there.
    home = Path(tempfile.mkdtemp(prefix="kindling-jobmanager-"))
    port = free_port()
    kindling("cluster", "start", "--port", str(port), "--home", str(home), timeout=120)
    try:
        yield {"url": f"http://127.0.0.1:{port}", "address": f"127.0.0.1:{port}", "home": home, "port": port}
    finally:
        subprocess.run([sys.executable, "-m", "kindling.cli", "cluster", "stop", "--home", str(home)], capture_output=True, timeout=120, cwd=ROOT)
        shutil.rmtree(home, ignore_errors=True)
